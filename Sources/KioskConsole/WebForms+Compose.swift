import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

/// `POST /debug/requests/{id}/compose`: the composer's fields as typed, so a request that cannot be sent
/// is shown again with the reason and nothing typed is lost.
struct ComposeForm: Decodable, Sendable {
    static let names: Set<String> = ["csrf", "method", "url", "query", "headers", "body", "keep_body"]

    var method = "GET"
    var url = ""
    /// "name=value" lines.
    var query = ""
    /// "Name: value" lines.
    var headers = ""
    var body = ""
    /// Whether the logged body goes as it was, unedited: one that is no text (a protobuf, a file in a form), which a
    /// textarea cannot carry (its bytes would come back as U+FFFD, or be refused as control characters).
    var keepsBody = false

    /// The form showing `record` as logged.
    init(_ record: RequestRecord) {
        let request = ComposedRequest(record)
        method = request.method
        url = request.url
        query = request.queryItems.map { "\($0.name)=\($0.value)" }.joined(separator: "\n")
        headers = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        keepsBody = record.requestBody.map { !Self.isText($0.data) } ?? false
        body = keepsBody ? "" : request.body ?? ""
    }

    /// Whether `data` reads as text a textarea carries back: UTF-8 without control characters but tabs and line breaks.
    static func isText(_ data: Data) -> Bool {
        guard let text = String(validating: data, as: UTF8.self) else { return false }
        return !text.unicodeScalars.contains { $0.properties.generalCategory == .control && !["\t", "\n", "\r"].contains($0) }
    }

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(Self.names)
        method = try form.text("method") ?? ""
        url = try form.text("url") ?? ""
        query = try form.text("query") ?? ""
        headers = try form.text("headers") ?? ""
        body = try form.text("body") ?? ""
        keepsBody = try form.text("keep_body") == "1"
    }

    /// The request the form describes, of `original` (the request as logged; the debugger checks it when sending); throws,
    /// in `w`'s words, for a header line without a colon. A body kept, or sent back as shown (a textarea returns its line
    /// breaks as CRLF and drops a first one), is the logged one: sent as its bytes.
    func request(_ w: ConsoleWords, original: ComposedRequest) throws(DebugController.FieldsProblem) -> ComposedRequest {
        let normal = { (text: String) -> String in
            let lines = text.replacingOccurrences(of: "\r\n", with: "\n")
            return lines.hasPrefix("\n") ? String(lines.dropFirst()) : lines
        }
        let asLogged = keepsBody || normal(body) == normal(original.body ?? "")
        return ComposedRequest(
            method: method.trimmingCharacters(in: .whitespaces), url: url.trimmingCharacters(in: .whitespaces),
            queryItems: try DebugController.queryItems(query, w).map { ComposedRequest.QueryItem(name: $0.name, value: $0.value) },
            headers: try DebugController.headerFields(headers, w),
            body: asLogged ? original.body : body.isEmpty ? nil : body)
    }
}

/// `POST /debug/api/requests/{id}/resend`: what to change, every field optional (left out: as logged).
struct ResendJSON: Decodable, Sendable {
    struct Pair: Decodable, Sendable {
        var name: String
        var value: String
    }

    var method: String?
    var url: String?
    var query: [Pair]?
    var headers: [Pair]?
    var body: String?

    /// `original` with the fields given replacing its own. A `url` with a query replaces the logged query with it (and
    /// with `query`'s items after it, when given): a URL given whole means the request it names, not one whose logged
    /// items are added to it again (`?z=5` sent as `?z=5&z=1`).
    func applied(to original: ComposedRequest) -> ComposedRequest {
        var request = original
        if let method { request.method = method }
        var items = query.map { $0.map { ComposedRequest.QueryItem(name: $0.name, value: $0.value) } }
        if let url {
            request.url = url
            if url.contains("?") {
                // (One that does not parse is refused when sent: the logged items are not added to it either.)
                let split = ComposedRequest.split(url.trimmingCharacters(in: .whitespaces))
                if let split { request.url = split.url }
                items = (split?.items ?? []) + (items ?? [])
            }
        }
        if let items { request.queryItems = items }
        if let headers { request.headers = headers.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) } }
        if let body { request.body = body }
        return request
    }
}
