public import Foundation
public import KioskCore
import KioskNetwork
package import KioskStore
import Synchronization

/// Where an image came from.
public enum ImageOrigin: String, Sendable, Hashable, Codable {
    case memory, disk, network, notModified
}

/// Image bytes ready to serve.
public struct ImageResponse: Sendable, Hashable {
    public var data: Data
    public var contentType: String
    public var origin: ImageOrigin
    /// The upstream ETag, for the web layer's own validators.
    public var etag: String?
    /// Served from cache past its freshness because the upstream failed.
    public var isStale: Bool
    /// How Kiosk's cache decided it, in RFC 9211 terms (a memory hit keeps no lifetime, so it has no `ttl`).
    public var cacheStatus: CacheStatus
}

/// A least-recently-used memory cache bounded by total cost (bytes); thread-safe without an actor hop,
/// so hits cost a lock and a dictionary lookup.
public final class MemoryImageCache: Sendable {
    private struct Entry {
        var response: ImageResponse
        var cost: Int
        var tick: UInt64
    }

    private struct State {
        var entries: [URL: Entry] = [:]
        var totalCost = 0
        var tick: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The most bytes kept.
    public let costLimit: Int

    public init(costLimit: Int) { self.costLimit = costLimit }

    /// The cached image, marking it recently used.
    public func value(for url: URL) -> ImageResponse? {
        state.withLock { state in
            guard var entry = state.entries[url] else { return nil }
            state.tick += 1
            entry.tick = state.tick
            state.entries[url] = entry
            return entry.response
        }
    }

    /// Stores an image, evicting the least recently used ones beyond the cost limit. Images larger than
    /// a quarter of the limit are not kept (they would flush everything else).
    public func insert(_ response: ImageResponse, for url: URL) {
        let cost = response.data.count
        guard cost <= costLimit / 4 else { return }
        state.withLock { state in
            state.tick += 1
            if let old = state.entries[url] { state.totalCost -= old.cost }
            state.entries[url] = Entry(response: response, cost: cost, tick: state.tick)
            state.totalCost += cost
            guard state.totalCost > costLimit else { return }
            for (key, entry) in state.entries.sorted(by: { $0.value.tick < $1.value.tick }) {
                guard state.totalCost > costLimit else { break }
                state.entries[key] = nil
                state.totalCost -= entry.cost
            }
        }
    }

    /// Bytes and entries held now.
    public var usage: (count: Int, bytes: Int) { state.withLock { ($0.entries.count, $0.totalCost) } }

    /// Drops everything.
    public func removeAll() { state.withLock { $0 = State() } }
}

/// Loads images like Nuke does: memory cache, then a size-limited disk cache (LRU, in SQLite) with ETag
/// revalidation, then the network — with exactly one upstream fetch for any number of concurrent
/// requests of one URL. Only http(s) URLs on allowed hosts are fetched (no open proxy).
public actor ImagePipeline {
    /// Limits and policy.
    public struct Configuration: Sendable {
        public var memoryCostLimit: Int
        public var diskSizeLimit: Int
        /// Freshness when the upstream sends no Cache-Control (images rarely change): 7 days.
        public var defaultLifetime: TimeInterval
        /// Origins pictures are served from (the configured sources'); nil serves any http(s) URL.
        public var allowedOrigins: Set<Origin>?
        /// Public picture hosts (CDNs) served on their default http and https ports.
        public var allowedHosts: Set<String>

        public init(memoryCostLimit: Int = 64_000_000, diskSizeLimit: Int = 200_000_000,
                    defaultLifetime: TimeInterval = 7 * 86400, allowedOrigins: Set<Origin>? = nil,
                    allowedHosts: Set<String> = []) {
            self.memoryCostLimit = memoryCostLimit
            self.diskSizeLimit = diskSizeLimit
            self.defaultLifetime = defaultLifetime
            self.allowedOrigins = allowedOrigins
            self.allowedHosts = allowedHosts
        }
    }

    private let configuration: Configuration
    private let transport: any HTTPTransport
    private let database: AppDatabase
    private let now: @Sendable () -> Date
    private var inFlight: [URL: Task<ImageResponse, any Error>] = [:]
    /// The memory cache (exposed for stats and benchmarks).
    public nonisolated let memory: MemoryImageCache
    /// Upstream requests made so far (304s included).
    public private(set) var networkFetches = 0

    /// Dependencies: the transport stack, the store for the disk cache, and the time.
    package init(configuration: Configuration = Configuration(), transport: any HTTPTransport, database: AppDatabase,
                now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.transport = transport
        self.database = database
        self.now = now
        self.memory = MemoryImageCache(costLimit: configuration.memoryCostLimit)
    }

    /// Checks that a URL may be served: http(s), and on a configured source's origin, on a source's
    /// picture CDN at its default port, or the exact picture of a stored item (dogs pictures live on
    /// hosts of their own). Anything else is refused, so Kiosk is never an open proxy; where a served
    /// URL may then be fetched from is the outbound policy's decision, made on every hop.
    public nonisolated func validate(_ url: URL) throws {
        guard let origin = Origin(url) else { throw KioskError.invalidRequest("Only http(s) image URLs are served") }
        guard let allowed = configuration.allowedOrigins else { return }
        if allowed.contains(origin) { return }
        if configuration.allowedHosts.contains(origin.host), origin.port == (origin.scheme == "https" ? 443 : 80) { return }
        if try database.isStoredImageURL(url.absoluteString) { return }
        throw KioskError.invalidRequest("Images from \(origin) are not served: it is not the origin of a configured source")
    }

    /// The image at `url`, from the fastest place that has it fresh.
    public func image(for url: URL) async throws -> ImageResponse {
        try validate(url)
        if let hit = memory.value(for: url) {
            var response = hit
            response.origin = .memory
            response.cacheStatus = CacheStatus(.fresh)
            return response
        }
        if let task = inFlight[url] {
            // Joined onto a load already under way: when that load went upstream, this request was collapsed.
            var response = try await task.value
            response.cacheStatus.isCollapsed = !response.cacheStatus.isHit
            return response
        }
        let task = Task { try await self.load(url) }
        inFlight[url] = task
        defer { inFlight[url] = nil }
        return try await task.value
    }

    private func load(_ url: URL) async throws -> ImageResponse {
        let stored = try database.image(forURL: url.absoluteString)
        let start = now()
        if let stored, start < stored.freshUntil {
            let response = Self.response(from: stored, origin: .disk, isStale: false,
                                         cacheStatus: CacheStatus(.fresh, ttl: stored.freshUntil.timeIntervalSince(start)))
            memory.insert(response, for: url)
            return response
        }
        var request = HTTPRequest(url: url, headers: ["Accept": "image/*"], endpoint: "image", purpose: .picture)
        if let etag = stored?.etag { request.headers["If-None-Match"] = etag }
        if let lastModified = stored?.lastModified { request.headers["If-Modified-Since"] = lastModified }
        networkFetches += 1
        let forward: CacheStatus.Forward = stored == nil ? .miss : .stale
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as KioskError {
            guard let stored else { throw error }
            // stale-if-error: an old picture beats a placeholder.
            return Self.response(from: stored, origin: .disk, isStale: true, cacheStatus: CacheStatus(
                error.isConnectivityFailure ? .offline : .staleOnError, forward: forward,
                ttl: stored.freshUntil.timeIntervalSince(now())))
        }
        let received = now()
        // The decision on an answer that came back: `ttl` and `stored` when it was stored.
        func status(_ decision: CacheDecision, freshUntil: Date?) -> CacheStatus {
            CacheStatus(decision, forward: forward, forwardStatus: response.status, ttl: freshUntil?.timeIntervalSince(received),
                        stored: freshUntil != nil, collapsed: response.isCollapsed)
        }
        let decision = CachePolicy(defaultLifetime: configuration.defaultLifetime)
            .decide(headers: response.headers, receivedAt: received)
        if response.status == 304, var stored {
            if case .store(let freshUntil, let validators, _) = decision {
                stored.freshUntil = freshUntil
                if let etag = validators.etag { stored.etag = etag }
            }
            stored.fetchedAt = received
            let kept = try keep { try database.saveImage(stored, sizeLimit: configuration.diskSizeLimit) }
            let image = Self.response(from: stored, origin: .notModified, isStale: false,
                                      cacheStatus: status(CacheDecision(forwardedAnswer: response), freshUntil: kept ? stored.freshUntil : nil))
            memory.insert(image, for: url)
            return image
        }
        guard response.isSuccess, !response.body.isEmpty else {
            if let stored {
                return Self.response(from: stored, origin: .disk, isStale: true, cacheStatus: CacheStatus(
                    .staleOnError, forward: forward, forwardStatus: response.status, ttl: stored.freshUntil.timeIntervalSince(received)))
            }
            if response.status == 404 { throw KioskError.notFound("image \(url.redactedString)") }
            throw KioskError.httpStatus(response.status, url: url.redactedString)
        }
        let contentType = response.headers["Content-Type"] ?? Self.sniff(response.body)
        guard contentType.lowercased().hasPrefix("image/") else {
            throw KioskError.malformedResponse(path: "$", message: "expected an image, got \(contentType)")
        }
        var storedUntil: Date?
        if case .store(let freshUntil, let validators, _) = decision,
           try keep({ try database.saveImage(StoredImage(url: url.absoluteString, data: response.body, contentType: contentType,
                                                        etag: validators.etag, lastModified: validators.lastModified,
                                                        fetchedAt: received, freshUntil: freshUntil),
                                            sizeLimit: configuration.diskSizeLimit) }) {
            storedUntil = freshUntil
        }
        let image = ImageResponse(data: response.body, contentType: contentType, origin: .network,
                                  etag: response.headers["ETag"], isStale: false,
                                  cacheStatus: status(CacheDecision(forwardedAnswer: response), freshUntil: storedUntil))
        memory.insert(image, for: url)
        return image
    }

    /// Stores a picture with `write`; false when the store cannot be written now (a full disk, a read-only folder): the
    /// picture is then shown unstored, as a page is (`CatalogService.keep`, whose warning, once, covers pictures too: they
    /// fail on the same disk). Any other failure is thrown.
    private func keep(_ write: () throws -> Void) throws -> Bool {
        do {
            try write()
            return true
        } catch let error as KioskError where AppDatabase.cannotWrite(error) {
            return false
        }
    }

    private static func response(from stored: StoredImage, origin: ImageOrigin, isStale: Bool,
                                 cacheStatus: CacheStatus) -> ImageResponse {
        ImageResponse(data: stored.data, contentType: stored.contentType ?? sniff(stored.data), origin: origin,
                      etag: stored.etag, isStale: isStale, cacheStatus: cacheStatus)
    }

    /// A content type from the first bytes, for stores that lost it.
    static func sniff(_ data: Data) -> String {
        if data.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if data.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if data.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if data.count > 12, data[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        return "application/octet-stream"
    }
}
