import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

/// `POST /debug/requests/{id}/compose`: the composer's fields as typed, so a request that cannot be sent
/// is shown again with the reason and nothing typed is lost.
struct ComposeForm: Decodable, Sendable {
    static let names: Set<String> = ["csrf", "method", "url", "query", "headers", "body"]

    var method = "GET"
    var url = ""
    /// "name=value" lines.
    var query = ""
    /// "Name: value" lines.
    var headers = ""
    var body = ""

    /// The form showing `request`.
    init(_ request: ComposedRequest) {
        method = request.method
        url = request.url
        query = request.queryItems.map { "\($0.name)=\($0.value)" }.joined(separator: "\n")
        headers = request.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        body = request.body ?? ""
    }

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        try form.refuseUnknownNames(Self.names)
        method = try form.text("method") ?? ""
        url = try form.text("url") ?? ""
        query = try form.text("query") ?? ""
        headers = try form.text("headers") ?? ""
        body = try form.text("body") ?? ""
    }

    /// The request the form describes (the debugger checks it when sending); throws, in `w`'s words, for a header line
    /// without a colon.
    func request(_ w: ConsoleWords) throws(DebugController.FieldsProblem) -> ComposedRequest {
        return ComposedRequest(
            method: method.trimmingCharacters(in: .whitespaces), url: url.trimmingCharacters(in: .whitespaces),
            queryItems: try DebugController.queryItems(query, w).map { ComposedRequest.QueryItem(name: $0.name, value: $0.value) },
            headers: try DebugController.headerFields(headers, w),
            body: body.isEmpty ? nil : body)
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

    /// `original` with the fields given replacing its own.
    func applied(to original: ComposedRequest) -> ComposedRequest {
        var request = original
        if let method { request.method = method }
        if let url { request.url = url }
        if let query { request.queryItems = query.map { ComposedRequest.QueryItem(name: $0.name, value: $0.value) } }
        if let headers { request.headers = headers.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) } }
        if let body { request.body = body }
        return request
    }
}
