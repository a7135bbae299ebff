import Foundation
import KioskCore

/// Rebuilding a logged request for replay.
enum Replay {
    /// `request` with the named query items set to `values` (kept in place when present, appended when
    /// not); throws when any other value still reads `<redacted>`, as sending that would be wrong.
    static func replacing(_ values: [String: String], in request: HTTPRequest) throws -> HTTPRequest {
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) else { return request }
        var items = components.queryItems ?? []
        for (name, value) in values {
            if let index = items.firstIndex(where: { $0.name == name }) {
                items[index].value = value
            } else {
                items.append(URLQueryItem(name: name, value: value))
            }
        }
        if let unknown = items.first(where: { $0.value == Redactor.placeholder }) {
            throw KioskError.invalidRequest("Cannot send this request again: the secret \(unknown.name) is not known to this source.")
        }
        components.percentEncodedQuery = items.map { item in
            Endpoint.encode(item.name) + "=" + Endpoint.encode(item.value ?? "")
        }.joined(separator: "&")
        var signed = request
        signed.url = components.url ?? request.url
        return signed
    }
}
