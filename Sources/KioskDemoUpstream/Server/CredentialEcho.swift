import Foundation
import Hummingbird

/// The `echoCredentials` fault: an upstream that sends a request's credentials back in its ETag, its
/// names, titles and messages, and a header, as careless real APIs do ("Invalid ApiKey <the key>").
struct CredentialEcho: Sendable {
    /// `api-key`, `apikey`, `ts` and `hash` values as sent, joined by spaces.
    let text: String
    private let state: UpstreamState

    /// Nil when the request carries no credentials (Rick and Morty, dogs, pictures).
    init?(query: QueryItems, state: UpstreamState) {
        let values = ["api-key", "apikey", "ts", "hash"].compactMap { query[$0] }.filter { !$0.isEmpty }
        guard !values.isEmpty else { return nil }
        text = values.joined(separator: " ")
        self.state = state
    }

    /// The reply with the credentials in its ETag (remembered, so only that exact value revalidates) and
    /// after the opening quote of every `name`, `title`, `status`, `message`, `error` and `faultstring` value.
    func apply(to reply: Reply) -> Reply {
        var echoed = reply
        if let etag = reply.etag {
            let inner = etag.trimmingCharacters(in: CharacterSet(charactersIn: "W/\""))
            let tag = "\"\(inner).\(text.replacingOccurrences(of: " ", with: "."))\""
            state.issueEchoTag(tag)
            echoed.etag = tag
        }
        guard reply.contentType.hasPrefix("application/json"),
              var body = reply.body.getString(at: reply.body.readerIndex, length: reply.body.readableBytes) else { return echoed }
        // Also spelled with JSON's escapes, each character \uXXXX, and in capitals (a hex digest so is the same one), as an
        // upstream's own encoder may write them.
        let escaped = text.unicodeScalars.map { $0 == " " ? " " : String(format: "\\u%04x", $0.value) }.joined()
        for field in ["name", "title", "status", "message", "error", "faultstring"] {
            body = body.replacingOccurrences(of: "\"\(field)\":\"", with: "\"\(field)\":\"Invalid ApiKey \(text) (\(escaped); \(text.uppercased())) ")
        }
        echoed.body = ByteBuffer(string: body)
        return echoed
    }

    /// A 304 only for an echoed ETag of the same document, exactly as it was sent.
    func matches(ifNoneMatch: String, etag: String) -> Bool {
        let document = etag.split(separator: ".").first
        return ifNoneMatch.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return state.wasIssued(echoTag: tag) && tag.split(separator: ".").first == document
        }
    }
}
