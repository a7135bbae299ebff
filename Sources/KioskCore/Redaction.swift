import Foundation

/// Removes secrets from URLs and headers before they reach a log, a page, an error or a file.
public struct Redactor: Sendable, Hashable {
    /// The placeholder secrets are replaced with.
    public static let placeholder = "<redacted>"
    /// Query items whose values are secrets (case-insensitive).
    public var queryItems: Set<String>
    /// Header names whose values are secrets (case-insensitive).
    public var headers: Set<String>

    /// The default list: NYT's `api-key`, Marvel's `apikey`, `hash` and `ts`, and credential headers.
    public static let standard = Redactor(
        queryItems: ["api-key", "apikey", "hash", "ts"],
        headers: ["authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key"]
    )

    public init(queryItems: Set<String>, headers: Set<String>) {
        self.queryItems = Set(queryItems.map { $0.lowercased() })
        self.headers = Set(headers.map { $0.lowercased() })
    }

    /// The URL as text with secret query values (and any password) replaced by `<redacted>`.
    /// Works on the text so that nothing else about the URL (order, encoding) changes.
    public func redact(_ url: URL) -> String {
        var text = url.absoluteString
        if let password = url.password(percentEncoded: true), !password.isEmpty,
           let range = text.range(of: ":\(password)@") {
            text.replaceSubrange(range, with: ":\(Self.placeholder)@")
        }
        guard let questionMark = text.firstIndex(of: "?") else { return text }
        let afterQuery = text[questionMark...].firstIndex(of: "#") ?? text.endIndex
        let query = text[text.index(after: questionMark)..<afterQuery]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            let name = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let decoded = (name.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? name).lowercased()
            return queryItems.contains(decoded) ? "\(name)=\(Self.placeholder)" : String(pair)
        }.joined(separator: "&")
        return String(text[...questionMark]) + redacted + String(text[afterQuery...])
    }

    /// The headers with secret values replaced.
    public func redact(_ fields: HTTPHeaderFields) -> HTTPHeaderFields {
        HTTPHeaderFields(fields.map { field in
            headers.contains(field.name.lowercased()) ? (name: field.name, value: Self.placeholder) : field
        })
    }
}

extension URL {
    /// This URL as text with the standard secrets removed, for errors and logs.
    public var redactedString: String { Redactor.standard.redact(self) }
}
