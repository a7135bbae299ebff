import Foundation
import KioskCore
import Synchronization

/// The mutable state request handlers share: faults and their dice, request counts, bound ports.
///
/// Handlers run on many event loop threads at once and need this on every request, so it sits
/// behind one short `Mutex` rather than in an actor: a lock held for a dictionary update is cheaper
/// than an actor hop per request, and nothing inside ever waits.
final class UpstreamState: Sendable {
    private struct Guarded {
        var faults: FaultSettings
        var dice: SplitMix64
        var counts: [String: Int] = [:]
        var apiPort = 0
        var controlPort = 0
        var apiListening = false
        var baseURLString = ""
        var echoTags: Set<String> = []
    }

    private let guarded: Mutex<Guarded>
    private let host: String
    private let publicBase: String?

    init(configuration: DemoUpstreamConfiguration) {
        // Literal IPv6 addresses need brackets inside a URL.
        host = configuration.host.contains(":") ? "[\(configuration.host)]" : configuration.host
        guarded = Mutex(Guarded(faults: configuration.faults, dice: SplitMix64(seed: configuration.seed)))
        var base = configuration.publicBaseURL?.absoluteString
        while base?.hasSuffix("/") == true { base?.removeLast() }
        publicBase = base
    }

    // MARK: Ports

    var apiPort: Int { guarded.withLock { $0.apiPort } }
    var apiListening: Bool { guarded.withLock { $0.apiListening } }
    var baseURL: URL { URL(string: "http://\(host):\(apiPort)")! }
    var controlURL: URL { URL(string: "http://\(host):\(guarded.withLock { $0.controlPort })")! }
    /// `http://host:port` (or the configured public base), the prefix of every absolute URL in responses.
    var baseURLString: String { guarded.withLock { $0.baseURLString } }

    func setAPIPort(_ port: Int) {
        let base = publicBase ?? "http://\(host):\(port)"
        guarded.withLock {
            $0.apiPort = port
            $0.baseURLString = base
        }
    }

    func setControlPort(_ port: Int) { guarded.withLock { $0.controlPort = port } }
    func setAPIListening(_ listening: Bool) { guarded.withLock { $0.apiListening = listening } }

    // MARK: Faults

    var faults: FaultSettings { guarded.withLock { $0.faults } }
    func setFaults(_ faults: FaultSettings) { guarded.withLock { $0.faults = faults } }

    /// Counts the request and rolls its fault, in one lock: the base URL comes along because every
    /// response needs it.
    func begin(requestKey: String, source: SourceID?) -> (base: String, fault: FaultDecision) {
        guarded.withLock { state in
            state.counts[requestKey, default: 0] += 1
            guard let source, state.faults.applies(to: source) else { return (state.baseURLString, .none) }
            let faults = state.faults
            var decision = FaultDecision(latencyMilliseconds: faults.latencyMilliseconds, outcome: .none,
                                         echoesCredentials: faults.echoCredentials)
            let total = faults.failureRate + faults.rateLimitRate + faults.truncateRate + faults.malformedRate
                + faults.badItemRate
            // No draw when no rate is set keeps the dice sequence tied to requests that can fail.
            guard total > 0 else { return (state.baseURLString, decision) }
            let roll = state.dice.unit()
            let failureEdge = faults.failureRate
            let rateLimitEdge = failureEdge + faults.rateLimitRate
            let truncateEdge = rateLimitEdge + faults.truncateRate
            let malformedEdge = truncateEdge + faults.malformedRate
            // Last: with badItemRate 0 every earlier edge stays where it was, so a seed meets the same
            // faults it met before this outcome existed.
            let badItemEdge = malformedEdge + faults.badItemRate
            switch roll {
            case ..<failureEdge: decision.outcome = .serverError
            case ..<rateLimitEdge: decision.outcome = .rateLimited(retryAfterSeconds: faults.retryAfterSeconds)
            case ..<truncateEdge: decision.outcome = .truncated
            case ..<malformedEdge: decision.outcome = .malformed
            case ..<badItemEdge: decision.outcome = .badItem
            default: break
            }
            return (state.baseURLString, decision)
        }
    }

    // MARK: Counts

    func requestCount(pathPrefix: String) -> Int {
        guarded.withLock { state in
            state.counts.reduce(0) { $0 + ($1.key.hasPrefix(pathPrefix) ? $1.value : 0) }
        }
    }

    func resetRequestCounts() { guarded.withLock { $0.counts.removeAll() } }

    // MARK: Echoed ETags

    /// Remembers an ETag sent with echoed credentials, so only that exact value revalidates.
    func issueEchoTag(_ tag: String) {
        guarded.withLock { state in
            if state.echoTags.count > 10_000 { state.echoTags.removeAll() }
            state.echoTags.insert(tag)
        }
    }

    /// Whether `tag` was sent as an echoed ETag.
    func wasIssued(echoTag tag: String) -> Bool { guarded.withLock { $0.echoTags.contains(tag) } }

    /// Counts by full request key and by path.
    func statistics() -> (byRequest: [String: Int], byPath: [String: Int]) {
        let counts = guarded.withLock { $0.counts }
        var byPath: [String: Int] = [:]
        for (key, count) in counts {
            let path = key.split(separator: "?", maxSplits: 1).first.map(String.init) ?? key
            byPath[path, default: 0] += count
        }
        return (counts, byPath)
    }
}

/// What the dice decided for one request.
struct FaultDecision: Sendable, Equatable {
    var latencyMilliseconds: Int
    var outcome: FaultOutcome
    var echoesCredentials = false

    static let none = FaultDecision(latencyMilliseconds: 0, outcome: .none)
}

/// The one fault (if any) a request gets.
enum FaultOutcome: Sendable, Equatable {
    case none
    case serverError
    case rateLimited(retryAfterSeconds: Int)
    case truncated
    case malformed
    /// A list response with one item's name field set to `null`; see `FaultSettings.badItemRate`.
    case badItem
}
