import Foundation
import KioskCore

/// A typed upstream endpoint: a name for logs and breakpoints, path segments and query parameters.
/// It is the only place URLs are assembled, so every value is percent-encoded the same way.
struct Endpoint: Sendable, Hashable {
    /// Stable name such as `marvel.characters`.
    var name: String
    /// Path segments appended to the base URL; each is encoded on its own, so a `/` inside one stays data.
    var path: [String]
    /// Query parameters in the order they are sent.
    var query: [URLQueryItem]
    /// Whether commas in the path stay commas: an id list (`/episode/1,2,3`) the upstream splits on them.
    var keepsCommasInPath: Bool

    init(name: String, path: [String] = [], query: [URLQueryItem] = [], keepsCommasInPath: Bool = false) {
        self.name = name
        self.path = path
        self.query = query
        self.keepsCommasInPath = keepsCommasInPath
    }

    /// The full URL below `base`; keeps any query the base already has (a mirror's token, a jsonblob id).
    func url(relativeTo base: URL) throws -> URL {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else {
            throw KioskError.invalidRequest("Invalid base URL for \(name): \(base.redactedString)")
        }
        if !path.isEmpty {
            var basePath = components.percentEncodedPath
            while basePath.hasSuffix("/") { basePath.removeLast() }
            let segments = path.map { segment in
                keepsCommasInPath ? segment.split(separator: ",", omittingEmptySubsequences: false)
                    .map { Self.encode(String($0)) }.joined(separator: ",") : Self.encode(segment)
            }
            components.percentEncodedPath = basePath + "/" + segments.joined(separator: "/")
        }
        var pairs: [String] = []
        if let existing = components.percentEncodedQuery, !existing.isEmpty { pairs.append(existing) }
        for item in query {
            // URLComponents.queryItems leaves `+`, `;` and `/` alone and many servers read `+` as a space,
            // so values are encoded here with only the RFC 3986 unreserved characters left as they are.
            pairs.append(Self.encode(item.name) + "=" + Self.encode(item.value ?? ""))
        }
        components.percentEncodedQuery = pairs.isEmpty ? nil : pairs.joined(separator: "&")
        guard let url = components.url else {
            throw KioskError.invalidRequest("Cannot build a URL for \(name) from \(base.redactedString)")
        }
        return url
    }

    /// A GET request for this endpoint, tagged with its source and name.
    func request(relativeTo base: URL, source: SourceID) throws -> HTTPRequest {
        HTTPRequest(
            method: "GET",
            url: try url(relativeTo: base),
            headers: ["Accept": "application/json"],
            source: source,
            endpoint: name
        )
    }

    /// Percent-encodes everything except RFC 3986 unreserved characters (UTF-8 for non-ASCII).
    static func encode(_ text: String) -> String { PercentEncoding.unreserved(text) }
}

extension CatalogSource {
    /// `host` or `host:port` of a URL, for the endpoint registry.
    static func hostAndPort(_ url: URL) -> String {
        (url.host ?? "") + (url.port.map { ":\($0)" } ?? "")
    }
}
