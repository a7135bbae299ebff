import Foundation
import Hummingbird
import KioskCore
import Synchronization

/// Everything the API handlers share: state, accepted keys and the cache of encoded replies.
final class UpstreamCore: Sendable {
    let state: UpstreamState
    let keys: DemoUpstreamKeys
    let cache = ReplyCache()

    init(configuration: DemoUpstreamConfiguration) {
        state = UpstreamState(configuration: configuration)
        keys = DemoUpstreamKeys(nyt: configuration.nytAPIKey, marvelPublic: configuration.marvelPublicKey,
                                marvelPrivate: configuration.marvelPrivateKey)
    }

    /// Called before (re)binding: cached replies embed the old base URL.
    func prepareForStart() { cache.removeAll() }
}

/// A response before faults and conditional requests are applied.
struct Reply: Sendable {
    var status: HTTPResponse.Status
    var body: ByteBuffer
    var contentType: String
    /// A quoted strong entity tag.
    var etag: String?
    var cacheControl: String
    var retryAfterSeconds: Int?

    static let jsonType = "application/json; charset=utf-8"

    /// Cache lifetimes per source, as the brief for the demo fixes them.
    enum Lifetime {
        static let nyt = "public, max-age=3600"
        static let dogs = "public, max-age=3600"
        static let marvel = "public, max-age=86400"
        static let rickAndMorty = "public, max-age=86400"
        static let images = "public, max-age=604800"
        static let errors = "no-store"
    }

    /// A JSON reply whose strong ETag is the SHA-1 of the body, unless `etag` is given (Marvel hashes `data` only).
    static func json(_ status: HTTPResponse.Status, _ bytes: [UInt8], cacheControl: String,
                     etag: String? = nil) -> Reply {
        Reply(status: status, body: ByteBuffer(bytes: bytes), contentType: jsonType,
              etag: "\"\(etag ?? Hashing.entityTag(bytes))\"", cacheControl: cacheControl)
    }

    /// An error reply; errors must never be cached by clients.
    static func error(_ status: HTTPResponse.Status, _ bytes: [UInt8]) -> Reply {
        json(status, bytes, cacheControl: Lifetime.errors)
    }

    static func png(_ bytes: [UInt8]) -> Reply {
        Reply(status: .ok, body: ByteBuffer(bytes: bytes), contentType: "image/png",
              etag: "\"\(Hashing.entityTag(bytes))\"", cacheControl: Lifetime.images)
    }

    static let notFoundText = Reply(status: .notFound, body: ByteBuffer(string: "Not Found"),
                                    contentType: "text/plain; charset=utf-8", etag: nil,
                                    cacheControl: Lifetime.errors)
}

/// Encoded replies by canonical request, so repeated requests (benchmarks, paging back and forth)
/// cost a dictionary lookup instead of building and hashing JSON or PNG again.
final class ReplyCache: Sendable {
    private let entries = Mutex<[String: Reply]>([:])
    /// Beyond this many distinct requests the cache starts over; an LRU would not pay for itself here.
    private let capacity = 4096

    func reply(for key: String, make: () -> Reply) -> Reply {
        if let cached = entries.withLock({ $0[key] }) { return cached }
        // Built outside the lock: two racing requests may both build it, which is harmless.
        let reply = make()
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = reply
        }
        return reply
    }

    func removeAll() { entries.withLock { $0.removeAll() } }
}

/// A request's query, decoded the way web servers do (`+` is a space, then percent-decoding).
struct QueryItems: Sendable {
    /// Raw `name=value` segments as sent, for counting.
    let rawSegments: [Substring]
    let items: [(name: String, value: String)]

    /// Parameters that carry credentials: left out of request keys so counts group by what was asked.
    static let secretNames: Set<String> = ["api-key", "apikey", "ts", "hash"]

    init(_ query: String?) {
        let segments = (query ?? "").split(separator: "&", omittingEmptySubsequences: true)
        rawSegments = segments
        items = segments.map { segment in
            let parts = segment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The first value of `name`.
    subscript(name: String) -> String? { items.first { $0.name == name }?.value }

    /// `path?query` without credentials, the key requests are counted under.
    func countingKey(path: String) -> String {
        let kept = zip(rawSegments, items).filter { !Self.secretNames.contains($0.1.name) }.map(\.0)
        return kept.isEmpty ? path : path + "?" + kept.joined(separator: "&")
    }
}
