import Crypto
import Foundation
import KioskCore
import KioskNetwork
import KioskStore
import Synchronization

// `kiosk proxy`'s offline-first cache: the one layer of the proxy pipeline that keeps an app's answers and gives
// them back when the upstream cannot (docs/PROXY.md, "Offline-first for any app"). It sits below mocks and rewrite
// rules (a mock answers before it; a rule rewrites a stored answer as it would a fresh one, and what is stored is
// what the upstream sent) and above the outbound policy, so that offline it answers without a connection, a DNS
// lookup included.
//
// - What is stored is what RFC 9111 §3 lets a cache store: the answer to a GET (or a HEAD's, headers only, when no
//   GET's is stored: it answers HEADs alone), of a status that is final and
//   cacheable by default (§4.2.2) or that carries explicit freshness, without `no-store` (the request's or the
//   answer's) and without `Vary: *`; `private` is allowed, this cache being the user's own — but for a client on another machine
//   (`--proxy-auth`), to which it is a shared cache, as `s-maxage` and `proxy-revalidate` are read then. A body streamed past
//   the proxy's buffer limit (or an event stream) is not stored. Set-Cookie's value is not kept: a replayed answer must
//   not set an old session again; that the answer set a cookie is (an empty `Set-Cookie`, never given to an app), and
//   such an answer is given again only when the upstream fails — a hit, or a revalidation's 304, would give the
//   app the page without the cookie it sets (a session, a CSRF token), as nginx and Varnish, which do not store such
//   answers, never do.
// - A browser's CORS preflight (an OPTIONS with Origin and Access-Control-Request-Method, which a cross-origin request
//   with a token or a JSON body is sent after) is kept too, when it allowed the origin asking, by its Origin and the
//   method and headers it asked for: never given in place of an answer the upstream gives (the browser keeps it for
//   Access-Control-Max-Age itself), only when the upstream fails (unreachable, timed out, a 5xx) or offline, in any
//   mode — else the stored answers of a cross-origin API would never reach the page that asks for them.
// - The key: method, full URL, a SHA-256 of the request's Authorization and Cookie (one identity's answer is never
//   given to a request made with another; the secrets themselves never reach the file), and the request's values
//   of the headers the answer's `Vary` names. A client on another machine (`--proxy-auth`) is one more identity: the
//   outbound policy keeps it from this machine's own and private addresses, whose answers a local app may have stored.
// - `fallback` (the default): every request goes upstream as the app sent it; when the upstream cannot be reached,
//   times out or answers 5xx, the stored answer is given instead, however old, with its `Age`. A 304 to an app's
//   own conditional request refreshes the stored answer (§4.3.4) and goes to the app as it came.
// - Offline (`--offline`, or the console's switch): no upstream is asked; a stored answer is given, as a 304 when
//   the app's validator matches it; anything else is a 504 saying it is not stored.
// - Every answer through it carries `Cache-Status` (RFC 9211) in Kiosk's own words, appended to any an upstream
//   cache sent, and the same value goes to the request log.

/// How `kiosk proxy`'s cache answers (`--cache`).
public enum ProxyCacheMode: String, Sendable, Hashable, Codable, CaseIterable {
    /// Every request goes upstream; the stored answer is given when the upstream fails (unreachable, timeout, 5xx).
    case fallback
    /// A private HTTP cache by RFC 9111 and RFC 5861: fresh answers given without asking, stale ones revalidated
    /// (or given at once while revalidating behind, or standing in for an error, as their directives allow).
    case http
    /// Nothing is stored or given from the cache.
    case off
}

/// The cache's settings that can change while the proxy runs.
public struct ProxyCacheSettings: Sendable, Hashable, Codable {
    /// How the cache answers.
    public var mode: ProxyCacheMode
    /// Whether no upstream is asked at all: stored answers are given, anything else is a 504.
    public var offline: Bool

    /// Fallback and online unless told otherwise.
    public init(mode: ProxyCacheMode = .fallback, offline: Bool = false) {
        self.mode = mode
        self.offline = offline
    }
}

/// What `kiosk proxy` keeps of apps' answers: where, how much, and how it answers at first.
public struct ProxyCacheConfiguration: Sendable, Hashable {
    /// How it answers at start (switchable while running).
    public var settings = ProxyCacheSettings()
    /// The most the stored answers may add up to, in bytes (500 MB unless `--cache-size` says).
    public var maxBytes = ProxyCache.defaultMaxBytes
    /// How long the upstream may take when a stored answer could stand in for its failure, before it does
    /// (`--fallback-after`): 8 s unless told, under the 10 s an Android app's OkHttp waits by default (an iOS app's
    /// URLSession waits 60, the proxy's own upstream timeout), so the app gets the stored answer before it gives up.
    public var fallbackAfter: Duration = .seconds(8)

    /// The defaults: fallback, online, 500 MB, 8 s.
    public init() {}
}

/// The proxy pipeline's cache layer (see the notes above).
final class ProxyCachingTransport: HTTPTransport {
    /// The upstream, each request its own: what `--cache off` sends to.
    private let direct: any HTTPTransport
    /// Wraps what the cache sends behind an answer already given in the log's capture (the capture above sees only
    /// what apps asked).
    private let captureBehind: @Sendable (any HTTPTransport) -> any HTTPTransport
    /// The upstream through the collapsing of identical requests in flight, when the answer is one the cache may keep
    /// (RFC 9111 §4); any other is the first request's alone, the others sending their own. Not with `--cache off`:
    /// then the proxy is no cache, and every request of the app reaches the upstream.
    private let base: any HTTPTransport
    /// nil when the file could not be opened: nothing is stored, offline still never dials.
    private let cache: ProxyCache?
    let settings: Mutex<ProxyCacheSettings>
    private let now: @Sendable () -> Date
    /// How long an upstream may take to answer when a stored answer could stand in for its failure (nil: as long as
    /// the transport allows).
    private let patience: Duration?
    /// Told once when an answer could not be stored (a full disk), with why.
    private let warn: @Sendable (String) -> Void
    /// The entries being revalidated behind a stale answer: one revalidation each at a time, however many requests
    /// get the stale answer meanwhile.
    private let revalidating = Mutex<Set<String>>([])
    /// URLs (with their credentials) whose whole answer, fetched behind a 304, was not kept, and when (`fillBehind`).
    private let unkept = Mutex<[String: Date]>([:])
    /// What tells an app's credentials (its secret fields, query items and password), to hide where its answer echoes them.
    private let redactor: Redactor
    /// Why the last answer that could not be stored was not, once one was not (said once through `warn`).
    let failure = Mutex<String?>(nil)
    /// The most bytes of an answer slow to end kept as it passes, to be stored once it ended: the proxy's buffer limit,
    /// as for an answer held whole.
    private let bufferLimit: Int
    /// What the bytes kept of answers slow to end count against, as held bodies do (nil: no budget).
    private let heldBodies: HeldBodies?
    /// Whether upstream HTTPS certificates are checked. Not (`--insecure-upstream`), an HTTPS answer is not kept: anyone
    /// on the way could have written it, and replayed later (offline, in place of a failure) it would carry no mark.
    private let verifiesUpstream: Bool

    init(base: any HTTPTransport, captureBehind: @escaping @Sendable (any HTTPTransport) -> any HTTPTransport = { $0 }, cache: ProxyCache?,
         settings: ProxyCacheSettings, patience: Duration? = nil, redactor: Redactor = .standard, bufferLimit: Int = 16 << 20,
         heldBodies: HeldBodies? = nil, verifiesUpstream: Bool = true, now: @escaping @Sendable () -> Date,
         warn: @escaping @Sendable (String) -> Void) {
        direct = base
        self.verifiesUpstream = verifiesUpstream
        self.bufferLimit = bufferLimit
        self.heldBodies = heldBodies
        self.redactor = redactor
        self.captureBehind = captureBehind
        // Only an answer the cache could give the requests that joined it without asking the upstream (RFC 9111 §4): one
        // it may store that is fresh as it comes. One without a freshness lifetime (no max-age, Expires or Last-Modified),
        // or with no-cache, must be asked again for each: each such request goes upstream, as the app sent it. An answer
        // that sets a cookie is not shared either: each request that joined would get the same session. A 304 is: the
        // requests that joined asked with the same validators at once (the proxy's revalidation of one stored answer as it
        // expires, most often), and each takes it as its leader does — the stored answer renewed — rather than each
        // asking the upstream again.
        // Read as a shared cache reads it (`private` is not given to another request): joined requests may be other
        // machines' (`--proxy-auth`).
        // (Fresh under both readings: the requests joined may be this machine's, to which `s-maxage` means nothing.)
        self.base = CoalescingTransport(base: base, byRedactedURL: false) { response in
            let now = now()
            return response.headers["Set-Cookie"] == nil && (response.status == 304
                || Self.isStorable(response, for: HTTPRequest(url: response.url, endpoint: "", purpose: .proxiedForNetwork))
                    && Self.isFreshOnArrival(status: response.status, headers: response.headers, at: now, shared: true)
                    && Self.isFreshOnArrival(status: response.status, headers: response.headers, at: now, shared: false))
        }
        self.cache = cache
        self.settings = Mutex(settings)
        self.patience = patience
        self.now = now
        self.warn = warn
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let settings = settings.withLock { $0 }
        // A GET with a body (a search engine's query) asks for what its body says, which the key does not hold: it is
        // neither answered from the store nor stored, as if its method were another.
        let bodied = request.hasBody
        let readable = (request.method == "GET" || request.method == "HEAD") && !bodied
        let preflight = request.isCORSPreflight
        // A request the developer sent again from the console (edited, perhaps) is asked of the upstream as `--cache off`
        // asks: its answer is the developer's, never stored for the app nor joined to the app's own requests.
        let resent = request.touches.contains { $0.kind == .resend }
        // The key (the URL and a digest of the credentials) is made only when the cache will be read: not with `--cache off`.
        let key = (readable || preflight) && !resent && (settings.offline || settings.mode != .off) ? Key(request) : nil
        if settings.offline {
            let found: ProxyCacheLookup? = if let key, let cache { try? await lookup(key, request, in: cache, using: true) } else { nil }
            guard case .found(let entry)? = found else {
                if let key, let cache, let entry = await anonymousStandIn(for: key, request, in: cache) {
                    return answer(from: entry, to: request, status: CacheStatus(.offline, forward: .varyMiss,
                                                                                ttl: Self.remainingFreshness(of: entry, at: now(), shared: Self.isShared(request))))
                }
                // A GET of a URL only ever asked with HEAD: say so, rather than that it was never fetched.
                if request.method == "GET", let key, let cache, case .found? = try? await lookup(method: "HEAD", key, in: cache, using: false) {
                    return Self.notStored(request, onlyHead: true)
                }
                // Answers of this URL stored for other credentials or headers (an archive's, recorded with its cookies):
                // said to the developer's own app, since "never fetched" would be wrong, and which of them differ is the
                // app's to see — never to a client on another machine, which would learn that someone's answer is there.
                // Cache-Status says so too (RFC 9211's vary-miss: the credentials are a secondary key, as a Vary on them
                // would be), else miss.
                let othersHeld = readable && Self.othersHeld(for: request, in: cache)
                let forward: CacheStatus.Forward = if case .varyMiss? = found { .varyMiss } else { othersHeld ? .varyMiss : .miss }
                return Self.notStored(request, storedForOthers: othersHeld, forward: forward)
            }
            return answer(from: entry, to: request, status: CacheStatus(.offline, ttl: Self.remainingFreshness(of: entry, at: now(),
                                                                                                      shared: Self.isShared(request))))
        }
        guard settings.mode != .off, let key, let cache else {
            let forward: CacheStatus.Forward = readable ? .bypass
                : bodied && (request.method == "GET" || request.method == "HEAD") ? .request : .method
            var response: HTTPResponse
            do {
                response = try await (settings.mode == .off || resent ? direct : base).send(request)
            } catch let error as KioskError where Self.isMarkedFailure(error) {
                throw CacheMarkedFailure(error, cacheStatus: CacheStatus(.network, forward: forward))
            }
            invalidate(after: request, answered: response)
            Self.mark(&response, CacheStatus(CacheDecision(forwardedAnswer: response, conditional: Self.isConditional(request.headers)),
                                             forward: forward, forwardStatus: response.status))
            return response
        }
        let found = (try? await lookup(key, request, in: cache, using: false)) ?? .uriMiss
        let shared = Self.isShared(request)
        let reason: CacheStatus.Forward = switch found {
        // In fallback a stored answer goes forward however fresh: by the cache's configuration (RFC 9211 `bypass`) while
        // fresh, `stale` once it is. A preflight's goes forward in either mode, fresh or not (it only ever stands in for a
        // failure): `bypass`, never `stale` beside a ttl saying it is fresh.
        case .found(let entry): preflight || settings.mode == .fallback && entry.changedAt == nil
            && Self.freshnessLifetime(of: entry, shared: shared) > Self.currentAge(of: entry, at: now()) ? .bypass : .stale
        case .varyMiss: .varyMiss
        case .uriMiss: .uriMiss
        }
        // The request will take nothing but a stored answer (RFC 9111 §5.2.1.7): none stored is a 504 in either mode; in
        // fallback, which otherwise always asks the upstream, a fresh one is given and a stale one is a 504, as `http`
        // decides below.
        // An answer that set a cookie is given again only when the upstream fails: never to such a request.
        let asked = Self.requestDirectives(request.headers)
        if asked.onlyIfCached {
            // Nor one whose URL was changed since it was stored: it must be confirmed first.
            guard case .found(let entry) = found, !entry.setsCookie, entry.changedAt == nil else {
                // (One that set a cookie is passed over by the cache's own rule, however fresh: `bypass`, not `stale`.)
                let passedOver: Bool = if case .found(let entry) = found { entry.setsCookie && entry.changedAt == nil } else { false }
                return Self.notStored(request, onlyIfCached: true, forward: passedOver ? .bypass : reason)
            }
            if settings.mode == .fallback {
                let now = now()
                let age = Self.currentAge(of: entry, at: now)
                let ttl = Self.freshnessLifetime(of: entry, shared: shared) - age
                let control = Self.control(of: entry.headers, shared: shared)
                // The request's own limits hold as in `http` (RFC 9111 §5.2.1): its max-age, min-fresh and no-cache.
                let refused = Self.refuses(asked, age: age, ttl: ttl)
                let stale = !refused && ttl <= 0 && Self.requestAcceptsStale(asked, of: control, staleness: -ttl)
                // (What it would have gone on for: the request's own limits, or the answer's age.)
                guard (ttl > 0 && !refused) || stale else {
                    return Self.notStored(request, onlyIfCached: true, forward: refused ? .request : .stale)
                }
                cache.noteUse(id: entry.id, at: now)
                return answer(from: entry, to: request, status: CacheStatus(stale ? .maxStale : .fresh, ttl: ttl))
            }
        }
        guard settings.mode == .http, !preflight, case .found(let entry) = found else {
            // fallback, or nothing stored: forward; in fallback any failure has the stored answer stand in, and a preflight's in
            // either mode (it is never given while the upstream answers).
            let response = try await forward(request, key: key, cache: cache, found: found, reason: reason) { failure in
                // The mode's own word, whatever failed: the stored answer stood in because the mode says it does.
                settings.mode == .fallback || preflight ? .fallback : nil
            }
            // A browser with a warm cache of its own asks with its validators, and the upstream's 304 leaves this cache
            // nothing to keep: offline, the app would have nothing, though it went through the proxy again and again. The app
            // has its 304 at once; the whole answer is fetched behind it, to be kept.
            if case .found = found {} else if request.method == "GET", response.status == 304, Self.isConditional(request.headers),
                                              !response.isMocked, !response.isEdited {
                fillBehind(request, answered: response, key: key, cache: cache, found: found, reason: reason)
            }
            return response
        }
        return try await answerByHTTP(request, key: key, cache: cache, entry: entry)
    }

    /// Whether the request's own directives refuse a stored answer of this age and remaining lifetime without asking the
    /// upstream (RFC 9111 §5.2.1): `no-cache`; `max-age` below its age — and `max-age=0` (a browser's reload) even for one
    /// whose age rounds to nothing; `min-fresh` beyond what stays fresh (§5.2.1.3).
    static func refuses(_ asked: CacheControl, age: TimeInterval, ttl: TimeInterval) -> Bool {
        asked.noCache || asked.maxAge.map { $0 == 0 || age > TimeInterval($0) } ?? false || asked.minFresh.map { ttl < TimeInterval($0) } ?? false
    }

    /// Whether the request's `max-stale` takes a stored answer this many seconds stale without asking upstream (RFC 9111
    /// §5.2.1.2), which the answer's own `must-revalidate` or `no-cache` forbids (§4.2.4).
    static func requestAcceptsStale(_ asked: CacheControl, of control: CacheControl, staleness: TimeInterval) -> Bool {
        guard let maxStale = asked.maxStale, !control.mustRevalidate, !control.noCache else { return false }
        return maxStale == Int.max || staleness <= TimeInterval(maxStale)
    }

    /// Why a forwarded request did not bring an answer an app should get.
    enum Failure {
        /// The upstream could not be reached.
        case unreachable
        /// It timed out or broke the connection.
        case failed
        /// It answered with this 5xx.
        case status(Int)

        /// What `http` mode gives in place of the failure: disconnection allows a stale answer (RFC 9111 §4.2.4);
        /// `stale-if-error` (`window`, seconds) one at most that stale, for an error RFC 5861 §4 names — one that
        /// would be a 500, 502, 503 or 504, not a 501 or 505, which are the server's answer, not an outage.
        func standIn(staleIfError window: Int?, staleness: TimeInterval) -> CacheDecision? {
            let withinWindow = window.map { staleness <= TimeInterval($0) } == true
            switch self {
            case .unreachable: return .offline
            case .failed: return withinWindow ? .staleIfError : nil
            case .status(let code): return withinWindow && [500, 502, 503, 504].contains(code) ? .staleIfError : nil
            }
        }
    }

    /// The `http` mode with an answer stored for the request (RFC 9111 §4): fresh and allowed by the request, a hit;
    /// else revalidated with its validators — or given at once while that runs behind (`stale-while-revalidate`) — and
    /// given stale when the upstream fails as `stale-if-error`, or disconnection (§4.2.4), allows.
    private func answerByHTTP(_ request: HTTPRequest, key: Key, cache: ProxyCache, entry: ProxyCacheEntry) async throws -> HTTPResponse {
        let now = now()
        let shared = Self.isShared(request)
        let control = Self.control(of: entry.headers, shared: shared)
        let asked = Self.requestDirectives(request.headers)
        let age = Self.currentAge(of: entry, at: now)
        let ttl = Self.freshnessLifetime(of: entry, shared: shared) - age
        let staleness = -ttl
        // A request that changed the URL succeeded since the answer was stored (RFC 9111 §4.4): it is given only once the
        // upstream confirms it — never fresh, stale by any directive, nor in place of a failure.
        let changed = entry.changedAt != nil
        var reason: CacheStatus.Forward = ttl > 0 && !changed ? .request : .stale
        // An answer that set a cookie goes upstream as the app asked, every time (the top of this file says why), and
        // is given again only when the upstream fails.
        if entry.setsCookie {
            let staleIfError = [control.staleIfError, asked.staleIfError].compactMap { $0 }.max()
            return try await forward(request, key: key, cache: cache, found: .found(entry), reason: .bypass) { failure in
                guard !changed, !control.mustRevalidate, !control.noCache else { return nil }
                return failure.standIn(staleIfError: staleIfError, staleness: staleness)
            }
        }
        // `max-age=0` (a browser's reload) asks for a revalidation even of an answer whose age rounds to nothing;
        // `min-fresh` for one that stays fresh at least that long (RFC 9111 §5.2.1.3). `If-Match` and
        // `If-Unmodified-Since` are the origin's to evaluate, not a cache's (RFC 9111 §4.3.2, RFC 9110 §13.2.1): such a
        // request goes forward with them, so that a 412 the app counts on is not a stored 200.
        let preconditioned = request.headers["If-Match"] != nil || request.headers["If-Unmodified-Since"] != nil
        let refused = Self.refuses(asked, age: age, ttl: ttl) || changed || preconditioned
        if ttl > 0 && !refused {
            cache.noteUse(id: entry.id, at: now)
            return answer(from: entry, to: request, status: CacheStatus(.fresh, ttl: ttl))
        }
        if !refused, Self.requestAcceptsStale(asked, of: control, staleness: staleness) {
            cache.noteUse(id: entry.id, at: now)
            return answer(from: entry, to: request, status: CacheStatus(.maxStale, ttl: ttl))
        }
        if asked.onlyIfCached { return Self.notStored(request, onlyIfCached: true, forward: reason) }
        if !refused, !control.mustRevalidate, !control.noCache, let window = control.staleWhileRevalidate, staleness <= TimeInterval(window) {
            cache.noteUse(id: entry.id, at: now)
            // A HEAD answered from a GET's stored answer renews it with a GET: a HEAD's answer carries no body to store.
            var renewal = Self.conditional(request, on: entry).request
            if request.method == "HEAD", entry.method == "GET" { renewal.method = "GET" }
            renewBehind(renewal, key: key, cache: cache, entry: entry, reason: .stale)
            return answer(from: entry, to: request, status: CacheStatus(.staleWhileRevalidate, ttl: ttl))
        }
        if refused && ttl > 0 && !changed { reason = .request }
        let revalidation = Self.conditional(request, on: entry)
        let staleIfError = [control.staleIfError, asked.staleIfError].compactMap { $0 }.max()
        // (Nor in place of a failure, to a request whose preconditions only the origin judges.)
        let mayServeStale = !changed && !control.mustRevalidate && !control.noCache && !preconditioned
        let response = try await forward(revalidation.request, asked: request, key: key, cache: cache, found: .found(entry),
                                         reason: reason) { failure in
            guard mayServeStale else { return nil }
            return failure.standIn(staleIfError: staleIfError, staleness: staleness)
        }
        // A 304 to validators the proxy added: the app asked for the whole answer, which is the stored one, renewed —
        // unless the 304 names another representation than the stored one: then nothing stored may be given, and the
        // app's own request goes upstream as it was.
        guard revalidation.added, response.status == 304 else { return response }
        guard Self.speaksOf(response.headers, entry, askedWith: revalidation.request.headers) else {
            return try await forward(request, key: key, cache: cache, found: .found(entry), reason: reason) { _ in nil }
        }
        // The answer in hand, renewed as the stored one was (`forward`): read back, it could be gone or another by now
        // (evicted, invalidated, cleared, replaced), and the app asked for a whole answer, which the 304 is not.
        var renewed = entry
        renewed.headers = ProxyCache.renewed(entry.headers, with: Self.storedHeaders(response.headers))
        renewed.requestTime = self.now()
        renewed.responseTime = renewed.requestTime
        var status = response.cacheStatus ?? CacheStatus(.revalidated, forward: reason, forwardStatus: 304)
        status.ttl = Int((Self.freshnessLifetime(of: renewed, shared: shared) - Self.currentAge(of: renewed, at: self.now())).rounded(.down))
        var answer = answer(from: renewed, to: request, status: status)
        // The cookies the 304 set are this app's: its request is the one the upstream answered.
        for cookie in response.headers.values(for: "Set-Cookie") { answer.headers.add(name: "Set-Cookie", value: cookie) }
        return answer
    }

    /// Sends the request upstream as it is; stores what may be stored, refreshes the found entry on a 304; when the
    /// upstream fails, `standIn` says with which decision the found entry is given instead (nil: the failure goes on).
    /// An entry that would stand in for a failure stands in for a slow upstream too: the request may take `patience`
    /// (the transport's timer: nothing is spent on it per request), and when it has, the same request goes again
    /// behind with the transport's whole time, storing what comes — an endpoint always that slow still renews what is kept.
    /// `asked` is the app's own request when `request` is the proxy's revalidation of it (validators added): a stored answer
    /// standing in is given as the app asked for it — whole, unless the app's own validator matches.
    private func forward(_ request: HTTPRequest, asked: HTTPRequest? = nil, key: Key, cache: ProxyCache, found: ProxyCacheLookup,
                         reason forward: CacheStatus.Forward, standIn: (Failure) -> CacheDecision?) async throws -> HTTPResponse {
        let asked = asked ?? request
        var request = request
        // What stands in for a failure: the answer stored for the request, else, for one with credentials none is stored
        // for, the one stored without credentials (said as another key's: vary-miss).
        func standingAnswer() async -> (ProxyCacheEntry, CacheStatus.Forward)? {
            if case .found(let entry) = found { return (entry, forward) }
            guard standIn(.unreachable) != nil, let entry = await anonymousStandIn(for: key, asked, in: cache) else { return nil }
            return (entry, .varyMiss)
        }
        // Not for an answer whose URL was changed since (an app reading back its write must get the write, however slow), nor
        // for a request that says it will not take a stored answer unconfirmed (`no-cache`, as a long poll asks): a slow
        // upstream is waited for then, and only a failure has the stored answer stand in. A preflight is waited for as its
        // request is: a browser holds the request behind it, which would fall back after the same time had its preflight.
        if let patience, case .found(let entry) = found, entry.changedAt == nil, standIn(.failed) != nil,
           !Self.requestDirectives(asked.headers).noCache { request.timeout = patience }
        let sent = now()
        let response: HTTPResponse
        do {
            var came = try await base.send(request)
            // Dated when it came, if the upstream did not (RFC 9110 §6.6.1), the app's copy and the stored one alike: a
            // stored answer is given with the date it was received, not its use's.
            if came.headers["Date"] == nil { came.headers["Date"] = HTTPDate.formatCached(now()) }
            response = came
        } catch let error as KioskError where Self.isMarkedFailure(error) {
            // An upstream that could not be trusted is not one that failed: the app is told why, never given what is stored
            // (but still told what the cache did, as for any failure).
            let standing = Self.isDistrusted(error) ? nil : await standingAnswer()
            guard let (entry, forward) = standing,
                  let decision = standIn(error.isConnectivityFailure ? .unreachable : .failed) else {
                // Nothing could stand in: the proxy's own 502 or 504 still says what the cache did.
                var failure = CacheMarkedFailure(error, cacheStatus: CacheStatus(.network, forward: forward))
                if case .found(let entry) = found, error.isConnectivityFailure {
                    failure.withheld = entry.changedAt.map(CacheMarkedFailure.Withheld.changed) ?? .unconfirmable
                } else if case .varyMiss(let names) = found, error.isConnectivityFailure, asked.purpose != .proxiedForNetwork {
                    failure.withheld = .otherVariants(varyBy: names)
                } else if case .uriMiss = found, error.isConnectivityFailure, asked.purpose != .proxiedForNetwork {
                    // (To a client on another machine a plain failure: it may not tell its miss from someone else's answer.)
                    // Answers of the URL stored for other credentials are said, as offline says them (vary-miss: the
                    // credentials are a secondary key): "none stored" sent the developer looking for a cache that was full.
                    if Self.othersHeld(for: asked, in: cache) {
                        failure = CacheMarkedFailure(error, cacheStatus: CacheStatus(.network, forward: .varyMiss))
                        failure.withheld = .otherCredentials
                    } else {
                        failure.withheld = .noneStored
                    }
                }
                throw failure
            }
            switch error {
            case .timeout, .stalledBody: if request.timeout != nil { renewBehind(request, key: key, cache: cache, entry: entry, reason: forward) }
            default: break
            }
            cache.noteUse(id: entry.id, at: now())
            return answer(from: entry, to: asked, status: CacheStatus(decision, forward: forward,
                                                                      ttl: Self.remainingFreshness(of: entry, at: now(), shared: Self.isShared(asked))))
        }
        let received = now()
        var answered = response
        if response.status >= 500, let decision = standIn(.status(response.status)), let (entry, forward) = await standingAnswer() {
            cache.noteUse(id: entry.id, at: now())
            return answer(from: entry, to: asked, status: CacheStatus(decision, forward: forward, forwardStatus: response.status,
                                                                      ttl: Self.remainingFreshness(of: entry, at: now(), shared: Self.isShared(asked))))
        }
        var stored = false
        // A GET's answer is stored as a GET's; a HEAD's as a HEAD's (headers only, never given to a GET), unless a GET's
        // answer for the URL is stored already: that one answers a HEAD as well, and stays the one kept.
        let preflight = request.isCORSPreflight
        let storedAs: String? = switch (request.method, found) {
        case ("GET", _): "GET"
        case ("HEAD", .found(let entry)) where entry.method == "GET": nil
        case ("HEAD", _): "HEAD"
        case ("OPTIONS", _) where preflight: "OPTIONS"
        default: nil
        }
        let storable = mayKeep(response, for: request)
        if response.status == 304, case .found(let entry) = found, !response.isMocked, !response.isEdited,
           Self.speaksOf(response.headers, entry, askedWith: request.headers),
           Self.forbidsKeeping(response.headers, status: entry.status, asked: request.headers) {
            // A 304 whose fields (or the request's) say no-store, or Vary: *, would renew the stored answer into one this
            // cache may not keep (RFC 9111 §3, §4.3.4): it goes, as a browser's cache drops it; the app still gets it.
            // (Once, by the request that went upstream for its twins.)
            if !response.isCollapsed {
                do { try cache.remove(id: entry.id) } catch { warnOnce(error) }
            }
        } else if response.status == 304, case .found(let entry) = found, !response.isMocked, !response.isEdited,
           Self.speaksOf(response.headers, entry, askedWith: request.headers), response.isCollapsed {
            // The request that went upstream for this one and its twins renews the stored answer, once.
            stored = true
        } else if case .found(let entry) = found, !response.isMocked, !response.isEdited, isChecked(request),
                  response.status == 304 && Self.speaksOf(response.headers, entry, askedWith: request.headers)
                    // A HEAD's 200 with the stored GET answer's validators speaks of it too (RFC 9111 §4.3.5).
                    || request.method == "HEAD" && response.status == 200 && entry.method == "GET"
                    && !Self.headSaysChanged(response.headers, entry.headers) && Self.speaksOf(response.headers, entry, askedWith: [:])
                    && !Self.forbidsKeeping(response.headers, status: entry.status, asked: request.headers) {
            do {
                let hider = Self.hider(for: request, redactor)
                let varying = { (fields: HTTPHeaderFields) in
                    Self.storedVary(HTTPResponse(status: entry.status, headers: fields, body: Data(), url: request.url),
                                    preflight: request.isCORSPreflight)
                }
                if varying(ProxyCache.renewed(entry.headers, with: Self.storedHeaders(response.headers))) != varying(entry.headers) {
                    // A 304 whose Vary names other request fields than the stored answer was kept by (RFC 9110 §15.4.5 has
                    // it carry the Vary its 200 would) changes which requests the answer may serve: renewed under its old
                    // key it would be given, fresh, to requests it was never chosen for (RFC 9111 §4.1). It goes; the app
                    // still gets it, and the next request fetches and keeps it by the new fields.
                    try cache.remove(id: entry.id)
                } else {
                    // Its fields as an answer's are kept (its Content-Length aside): a cookie it sets is this app's alone,
                    // its Cache-Status made anew.
                    stored = try cache.refresh(id: entry.id, validators: entry.headers, with: Self.storedHeaders(response.headers),
                                               requestTime: sent, responseTime: received) { fields in
                        hider.flatMap { Self.hidden(fields, $0) }
                    }
                }
            } catch {
                warnOnce(error)
            }
        } else if request.method == "HEAD", response.status == 200, case .found(let entry) = found, entry.method == "GET",
                  settings.withLock({ $0.mode == .http }), Self.headSaysChanged(response.headers, entry.headers) {
            // A HEAD's answer whose validators or length differ from the stored GET's says that one is out of date
            // (RFC 9111 §4.3.5): it goes, and the next GET fetches the answer as it is now. Not in `fallback`, where the
            // stored answer is only ever given when the upstream fails, however old: dropped, the app would have none.
            do { try cache.remove(id: entry.id) } catch { warnOnce(error) }
        } else if storedAs != nil, storable, response.isCollapsed {
            // The request that went upstream for this one and its twins stores the answer, once.
            stored = true
        } else if let storedAs, case .found(let entry) = found, entry.method == storedAs, storable,
                  Self.isUnchanged(entry, response) {
            // The same answer again: only its times move, written behind.
            cache.noteConfirmed(id: entry.id, requestTime: sent, responseTime: received, date: response.headers["Date"],
                                age: response.headers["Age"])
            stored = true
        } else if let storedAs, storable {
            stored = keep(response, as: storedAs, key: key, request: request, preflight: preflight, sent: sent, received: received, in: cache)
        } else if let storedAs, let stream = response.stream, !response.isCollapsed, !response.isMocked, !response.isEdited {
            // An answer handed on before its end is kept or outdates the stored one only once it ended whole: one cut short
            // (the upstream gone mid-body) is no answer, and the stored one stays to stand in for it. One streamed only for
            // being slow to end (a server that sends its head, then works) is kept as it passes, as it would have been held.
            let whole = { @Sendable (body: Data) in
                var whole = response
                whole.stream = nil
                whole.body = body
                return whole
            }
            let keeps = response.isSlowToEnd && mayKeep(whole(Data()), for: request)
            var outdated: ProxyCacheEntry? = if case .found(let entry) = found, entry.method == storedAs,
                                                Self.outdates(response, request) { entry } else { nil }
            // A head whose validators are not the stored answer's says it is out of date already, however the body ends
            // (an app that stops reading, an event stream that never ends): it goes now, unless this one may replace it.
            if let entry = outdated, !keeps, Self.headSaysChanged(response.headers, entry.headers), settings.withLock({ $0.mode == .http }) {
                do { try cache.remove(id: entry.id) } catch { warnOnce(error) }
                outdated = nil
            }
            if keeps || outdated != nil {
                answered.stream = keptWhenWhole(stream, keeps: keeps) { [self, request, outdated] body in
                    if let body {
                        // Stored behind the body's end, not in the app's last read: redacting and coding up to 16 MB again
                        // would hold its answer's end back.
                        Task { _ = self.keep(whole(body), as: storedAs, key: key, request: request, preflight: preflight,
                                             sent: sent, received: received, in: cache) }
                    } else if let outdated, settings.withLock({ $0.mode == .http }) {
                        do { try cache.remove(id: outdated.id) } catch { warnOnce(error) }
                    }
                }
            }
        } else if let storedAs, case .found(let entry) = found, entry.method == storedAs, !response.isCollapsed, !response.isMocked,
                  !response.isEdited, Self.outdates(response, request), settings.withLock({ $0.mode == .http }) {
            // A newer whole answer this cache may not keep (no-store, Vary: *, too large) makes the stored one out of date:
            // it goes, as a browser's cache drops it, or the next request would get the older answer as fresh (RFC 9111
            // §4: the most recent response is the one used). Not in `fallback`, whose stored answer stands in for a failure
            // however old.
            do { try cache.remove(id: entry.id) } catch { warnOnce(error) }
        }
        // What was stored (or renewed, by a 304) is fresh for so long from now: RFC 9211's ttl.
        var ttl: TimeInterval?
        if stored {
            // (A whole 206 is stored as its 200: its lifetime is that one's.)
            var (status, headers) = Self.storedForm(response)
            // (A 304, or a HEAD's 200, renewed the stored answer: its fields as they are now.)
            if case .found(let entry) = found, response.status == 304 || (request.method == "HEAD" && entry.method == "GET") {
                (status, headers) = (entry.status, ProxyCache.renewed(entry.headers, with: Self.storedHeaders(response.headers)))
            }
            ttl = Self.freshnessLifetime(status: status, headers: headers, receivedAt: received, shared: Self.isShared(request))
                - Self.currentAge(headers: headers, requestTime: sent, responseTime: received, at: received)
        }
        Self.mark(&answered, CacheStatus(CacheDecision(forwardedAnswer: response, conditional: Self.isConditional(request.headers)),
                                         forward: forward, forwardStatus: response.status, ttl: ttl,
                                         stored: stored, collapsed: response.isCollapsed))
        return answered
    }

    /// Stores `response`, the answer to `request` (sent and received at those moments), as `storedAs`'s under `key`;
    /// whether it is to be stored (see `ProxyCache.store`).
    private func keep(_ response: HTTPResponse, as storedAs: String, key: Key, request: HTTPRequest, preflight: Bool,
                      sent: Date, received: Date, in cache: ProxyCache) -> Bool {
        let vary = Self.storedVary(response, preflight: preflight)
        let (status, headers) = Self.storedForm(response)
        var answer = ProxyCacheAnswer(method: storedAs, url: key.url, host: key.host, credentials: key.credentials, vary: vary,
                                      variant: key.variant(for: vary) ?? "", status: status,
                                      headers: headers, body: storedAs == "HEAD" ? Data() : response.body,
                                      requestTime: sent, responseTime: received)
        if ProxyCacheAnswer.isCredentialed(key.credentials) { answer.credentialFields = Key.credentialFields(request.headers) }
        // An answer echoing the app's own credentials (an echo service, a "hello <token>") keeps a copy without them
        // for the pages and exports; the log hides them the same way.
        if let hider = Self.hider(for: request, redactor) {
            answer.shownHeaders = Self.hidden(answer.headers, hider)
            // (Inside its content coding too: decoded, hidden, coded again.)
            let body = hider.redactBody(answer.body, contentType: answer.headers["Content-Type"],
                                        contentEncoding: answer.headers.combined("Content-Encoding"))
            if body != answer.body { answer.shownBody = body }
        }
        return cache.store(answer) { [self] error in warnOnce(error) }
    }

    /// Whether `response`, a newer answer to `request` than the one stored, makes that one out of date when this cache
    /// may not keep it: not a server error or a 429, which say nothing of the content, nor a part (a 206, an answer to a
    /// Range) or a 304 of another representation.
    private static func outdates(_ response: HTTPResponse, _ request: HTTPRequest) -> Bool {
        ((200..<400).contains(response.status) || [404, 410].contains(response.status))
            && response.status != 206 && response.status != 304 && request.headers["Range"] == nil
    }

    /// `stream`, telling `ended` once it ended whole (never when it was cut short, or left by its reader): with its body
    /// when `keeps` and the body stayed within the buffer limit and the held bodies' budget as it passed, else nil.
    private func keptWhenWhole(_ stream: BodyStream, keeps: Bool, ended: @escaping @Sendable (Data?) -> Void) -> BodyStream {
        let kept = KeptBody(limit: keeps ? bufferLimit : -1, budget: heldBodies)
        return stream.observed(chunk: { kept.add($0) }, end: { error in
            guard error == nil else { return }
            ended(kept.whole())
        })
    }

    /// The parts of a streamed body kept as they pass (see `keptWhenWhole`); what they hold of the budget is given back
    /// when they are dropped, past the limit or with the stream however it ended.
    private final class KeptBody: Sendable {
        private struct Parts {
            var list: [Data] = []
            var count = 0
            var reserved = 0
            var dropped = false
        }
        private let parts: Mutex<Parts>
        private let limit: Int
        private let budget: HeldBodies?

        /// Keeps up to `limit` bytes (none when it is negative), counted against `budget`.
        init(limit: Int, budget: HeldBodies?) {
            self.limit = limit
            self.budget = budget
            parts = Mutex(Parts(dropped: limit < 0))
        }

        deinit { budget?.release(parts.withLock { $0.reserved }) }

        /// Keeps `chunk`, or drops all kept when it would pass the limit or the budget has no room for it.
        func add(_ chunk: Data) {
            let freed = parts.withLock { parts -> Int in
                guard !parts.dropped else { return 0 }
                guard parts.count + chunk.count <= limit, budget?.reserve(chunk.count) ?? true else {
                    defer { parts = Parts(dropped: true) }
                    return parts.reserved
                }
                parts.list.append(chunk)
                parts.count += chunk.count
                if budget != nil { parts.reserved += chunk.count }
                return 0
            }
            budget?.release(freed)
        }

        /// The body kept, in one copy that holds its part of the budget while it lives; nil when it was dropped.
        func whole() -> Data? {
            let taken = parts.withLock { parts -> Parts in
                defer { parts = Parts(dropped: true) }
                return parts
            }
            guard !taken.dropped else { return nil }
            return HeldBodies.joined(taken.list, count: taken.count, budget: budget, reserved: taken.reserved) { part, use in
                part.withUnsafeBytes(use)
            }
        }
    }

    /// Sends `request` again behind the answer an app already got (a stale one within `stale-while-revalidate`, one that
    /// stood in for a slow upstream), with the transport's whole time, for what the upstream answers to be stored; one
    /// at a time per entry, however many requests got it meanwhile. An answer streamed past the buffer, which no one
    /// reads, is closed; one streamed for being slow to end is read to its end, to be stored.
    private func renewBehind(_ request: HTTPRequest, key: Key, cache: ProxyCache, entry: ProxyCacheEntry, reason: CacheStatus.Forward) {
        sendBehind(request, key: key, cache: cache, found: .found(entry), reason: reason, claim: "entry \(entry.id)") { }
    }

    /// The whole answer an app's conditional request left this cache without (the upstream's 304 to the app's own
    /// validators, nothing stored for it), fetched behind the 304 without them, as nginx's proxy_cache asks on a miss, for
    /// the next request and offline. Not for what the cache may not keep (no-store either way, a range), nor again for a
    /// while for a URL whose whole answer was not kept (too large, say): each of its reloads would fetch it again.
    private func fillBehind(_ request: HTTPRequest, answered: HTTPResponse, key: Key, cache: ProxyCache, found: ProxyCacheLookup,
                            reason: CacheStatus.Forward) {
        let shared = Self.isShared(request)
        guard !Self.requestDirectives(request.headers).noStore, !Self.control(of: answered.headers, shared: shared).noStore else { return }
        let claim = "url \(key.credentials) \(key.url)"
        let now = now()
        guard unkept.withLock({ passed in
            passed = passed.filter { now.timeIntervalSince($0.value) < Self.unkeptPause }
            return passed[claim] == nil
        }) else { return }
        var asked = request
        for name in ["If-None-Match", "If-Modified-Since", "If-Range", "Range"] { asked.headers.removeAll(named: name) }
        let whole = asked
        sendBehind(whole, key: key, cache: cache, found: found, reason: reason, claim: claim) { [self] in
            cache.flush()
            if case .found? = try? await lookup(key, whole, in: cache, using: false) { return }
            unkept.withLock { $0[claim] = self.now() }
        }
    }

    /// How long a URL whose whole answer was fetched behind a 304 and not kept is not fetched so again.
    static let unkeptPause: TimeInterval = 600

    /// `request` sent behind an answer already given, once at a time per `claim`, its answer read to its end for the cache
    /// to store it (`forward`), then `done`.
    private func sendBehind(_ request: HTTPRequest, key: Key, cache: ProxyCache, found: ProxyCacheLookup, reason: CacheStatus.Forward,
                            claim: String, done: @escaping @Sendable () async -> Void) {
        guard revalidating.withLock({ $0.insert(claim).inserted }) else { return }
        var unhurried = request
        unhurried.timeout = nil
        // Nothing of the app's wait is this exchange's: it was never held at a breakpoint.
        unhurried.heldAtBreakpoint = 0
        // Its own exchange, which no app waits for: the app's connection closing is not this one's to note.
        unhurried.appSide = nil
        // Logged as the exchange it is, with what the cache made of its answer.
        let logged = captureBehind(Behind { [self] request in
            try await forward(request, key: key, cache: cache, found: found, reason: reason) { _ in nil }
        })
        Task { [self] in
            let answer = try? await logged.send(unhurried)
            if let answer, answer.isSlowToEnd, let stream = answer.stream {
                // Read to its end, for it to be stored: as held, up to the buffer limit, and for a minute at most (an
                // upstream that trickles would hold the entry's one revalidation for ever).
                var read = 0
                let until = ContinuousClock.now + .seconds(60)
                while read <= bufferLimit, ContinuousClock.now < until, let part = try? await stream.next() { read += part.count }
                if read > bufferLimit || ContinuousClock.now >= until { stream.cancel() }
            } else {
                answer?.stream?.cancel()
            }
            await done()
            _ = revalidating.withLock { $0.remove(claim) }
        }
    }

    /// The cache's own send of a request behind an answer already given, as a transport a capture can wrap.
    private struct Behind: HTTPTransport {
        let exchange: @Sendable (HTTPRequest) async throws -> HTTPResponse
        init(_ exchange: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.exchange = exchange }
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { try await exchange(request) }
    }

    // MARK: - Looking up and answering

    /// What is stored for the request: a GET's answer (which answers a HEAD too), else for a HEAD a HEAD's; a preflight's
    /// for a preflight.
    private func lookup(_ key: Key, _ request: HTTPRequest, in cache: ProxyCache, using: Bool) async throws -> ProxyCacheLookup {
        if request.isCORSPreflight { return try await lookup(method: "OPTIONS", key, in: cache, using: using) }
        let found = try await lookup(method: "GET", key, in: cache, using: using)
        guard request.method == "HEAD", case .uriMiss = found else { return found }
        return try await lookup(method: "HEAD", key, in: cache, using: using)
    }

    private func lookup(method: String, _ key: Key, in cache: ProxyCache, using: Bool) async throws -> ProxyCacheLookup {
        let found = try await cache.lookup(method: method, url: key.url, credentials: key.credentials, variant: { key.variant(for: $0) },
                                           using: using, at: now())
        guard case .uriMiss = found else { return found }
        // Nothing stored for these credentials: an archive's answer, which belongs to no identity, may stand — the variant
        // the request matches, else the newest (a recorded browser's Accept-Encoding or User-Agent is seldom the app's).
        // Not a preflight's: its answer speaks of the origin, method and headers asked, and another's would say the wrong ones.
        let imported = try await cache.lookup(method: method, url: key.url, credentials: ProxyCacheAnswer.importedCredentials,
                                              variant: { key.variant(for: $0) }, orNewest: method != "OPTIONS", using: using, at: now())
        // Not a `private` one to a client on another machine, to which the cache is shared: it was someone's own.
        if key.isShared, case .found(let entry) = imported, Self.control(of: entry.headers, shared: true).isPrivate { return .uriMiss }
        return imported
    }

    /// The answer stored for the request asked with no credentials, standing in for an identity with none of its own when
    /// the upstream cannot answer (offline, or failing): what anyone gets, no identity's own — a page opened once before
    /// its app set a cookie. Never given while the upstream answers (a signed-in app would get the signed-out page), nor a
    /// `private` one to a client on another machine.
    private func anonymousStandIn(for key: Key, _ request: HTTPRequest, in cache: ProxyCache) async -> ProxyCacheEntry? {
        guard let anonymous = key.anonymous, case .found(let entry)? = try? await lookup(anonymous, request, in: cache, using: true),
              !(key.isShared && Self.control(of: entry.headers, shared: true).isPrivate) else { return nil }
        return entry
    }

    /// A stored answer as the app gets it: with its current `Age`, as a 304 when the app's own validator matches it,
    /// without a body to a HEAD.
    private func answer(from entry: ProxyCacheEntry, to request: HTTPRequest, status: CacheStatus) -> HTTPResponse {
        var headers = entry.headers
        headers.removeAll(named: "Set-Cookie")
        // An answer stored coded (gzip, for a browser that asked for it) given to a client that did not ask for that coding
        // (curl, a script) is given decoded, as nginx's gunzip does: the bytes it would get could only be read by one that
        // did. Another representation then: its validator weak (RFC 9110 §8.8.1), and it varies by Accept-Encoding. Not
        // one that says `no-transform` (RFC 9111 §5.2.2.6: no intermediary changes it), nor past the buffer limit decoded
        // (a small gzip body would be a huge one held per answer).
        var body = entry.body
        if let coding = ContentCoding.single(headers.combined("Content-Encoding")), !ContentCoding.accepts(coding, in: request.headers["Accept-Encoding"]),
           !Self.control(of: headers, shared: false).noTransform,
           let decoded = ContentCoding.decoded(entry.body, coding: coding, maximumBytes: bufferLimit) {
            body = decoded
            headers.removeAll(named: "Content-Encoding")
            headers.removeAll(named: "Transfer-Encoding")
            headers["Content-Length"] = String(decoded.count)
            if let tag = headers["ETag"]?.trimmingCharacters(in: .whitespaces), tag.hasPrefix("\"") { headers["ETag"] = "W/" + tag }
            if !headers.values(for: "Vary").contains(where: { $0.lowercased().contains("accept-encoding") }) {
                headers.add(name: "Vary", value: "Accept-Encoding")
            }
        }
        headers["Age"] = String(Int(Self.currentAge(of: entry, at: now())))
        // An answer that came without a `Date` is dated when it was received (RFC 9110 §6.6.1: a cache adds one then), the
        // same at every use; the listener would date it anew each time, younger than its `Age` says.
        if headers["Date"] == nil { headers["Date"] = HTTPDate.formatCached(entry.responseTime) }
        // Preconditions speak of a 2xx representation only (RFC 9110 §13.2.1): a stored 404 is given as it is.
        if (200..<300).contains(entry.status), Self.validatorMatches(request.headers, entry.headers, receivedAt: entry.responseTime) {
            for name in ["Content-Length", "Content-Type", "Content-Encoding", "Transfer-Encoding"] { headers.removeAll(named: name) }
            var response = HTTPResponse(status: 304, headers: headers, url: request.url)
            Self.mark(&response, status)
            return response
        }
        // A HEAD given a GET's answer says the length its body has, as the GET would (an archive's answer may not say it).
        if request.method == "HEAD", entry.method == "GET", headers["Content-Length"] == nil, headers["Transfer-Encoding"] == nil {
            headers["Content-Length"] = String(body.count)
        }
        // A range of a whole stored answer (a player seeking, a download resumed) is that part, as the upstream would give
        // it (RFC 9110 §14): offline too, and without asking for what is in hand.
        if request.method == "GET", entry.method == "GET", entry.status == 200,
           let range = Self.range(request.headers, of: body.count, validators: headers) {
            headers.removeAll(named: "Transfer-Encoding")
            var response: HTTPResponse
            if let range {
                headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(body.count)"
                headers["Content-Length"] = String(range.count)
                response = HTTPResponse(status: 206, headers: headers, body: body.subdata(in: range), url: request.url)
            } else {
                for name in ["Content-Length", "Content-Type", "Content-Encoding"] { headers.removeAll(named: name) }
                headers["Content-Range"] = "bytes */\(body.count)"
                headers["Content-Length"] = "0"
                response = HTTPResponse(status: 416, headers: headers, url: request.url)
            }
            Self.mark(&response, status)
            return response
        }
        var response = HTTPResponse(status: entry.status, headers: headers, body: request.method == "HEAD" ? Data() : body,
                                    url: request.url)
        Self.mark(&response, status)
        return response
    }

    /// The part of a body of `length` bytes a request's `Range` asks for, when a stored whole answer should be given as
    /// that part: `.some(range)` for a 206, `.some(nil)` when nothing of the body is in range (a 416); nil when the whole
    /// answer is given — no `Range`, one that is not a single byte range (several ranges: the whole answer is allowed, RFC
    /// 9110 §14.2), or an `If-Range` that names another representation than the stored one (a strong ETag, or the
    /// Last-Modified date exactly, §13.1.5).
    static func range(_ fields: HTTPHeaderFields, of length: Int, validators: HTTPHeaderFields) -> Range<Int>?? {
        guard let value = fields["Range"]?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let condition = fields["If-Range"]?.trimmingCharacters(in: .whitespaces) {
            let matches: Bool = if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
                EntityTag(condition).map { tag in
                    !tag.isWeak && validators["ETag"].flatMap(EntityTag.init).map { !$0.isWeak && $0.opaque == tag.opaque } == true
                } ?? false
            } else {
                validators["Last-Modified"].map { $0.trimmingCharacters(in: .whitespaces) == condition } ?? false
            }
            guard matches else { return nil }
        }
        guard value.lowercased().hasPrefix("bytes="), !value.contains(",") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces), last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        let digits = { (text: String) in text.allSatisfy { $0.isASCII && $0.isNumber } }
        guard digits(first), digits(last), !(first.isEmpty && last.isEmpty) else { return nil }
        if first.isEmpty {
            // The last N bytes (all of them for an N past the length, however long its digits); a suffix of 0 bytes is none.
            let suffix = Int(last) ?? Int.max
            guard suffix > 0, length > 0 else { return .some(nil) }
            return .some(max(0, length - suffix)..<length)
        }
        // A first position past what Int holds is past any body.
        guard let start = Int(first) else { return .some(nil) }
        let requestedEnd = last.isEmpty ? Int.max : Int(last) ?? Int.max
        // A last position before the first makes the range invalid, which is ignored (§14.1.1).
        guard requestedEnd >= start else { return nil }
        guard start < length else { return .some(nil) }
        return .some(start..<(min(requestedEnd, length - 1) + 1))
    }

    /// The offline answer to what is not stored: a 504 saying so.
    private static func notStored(_ request: HTTPRequest, onlyIfCached: Bool = false, onlyHead: Bool = false,
                                  storedForOthers: Bool = false, forward: CacheStatus.Forward = .miss) -> HTTPResponse {
        let text = onlyIfCached
            ? "The request asked for a stored answer only (Cache-Control: only-if-cached), and none fresh is stored for "
                + "\(request.method) \(request.url.absoluteString).\n"
            : onlyHead
            ? "Kiosk's proxy is offline and has only a HEAD's answer for \(request.url.absoluteString) (its fields, no body): the "
                + "app never fetched it with GET through the proxy. Go online to fetch it.\n"
            : storedForOthers
            ? "Kiosk's proxy is offline and holds answers for \(request.method) \(request.url.absoluteString), but each for other "
                + "credentials or headers (Authorization, Cookie, an API key's header, or a field the answer's Vary names, as an archive "
                + "recorded them): "
                + "one identity's answer is never given to another. Send the request as it was recorded, or go online.\n"
            : (request.method == "GET" || request.method == "HEAD") && request.hasBody
            ? "Kiosk's proxy is offline, and a \(request.method) with a body (a search's query) is never stored: what it asks for is in "
                + "its body, which the cache does not key by. Go online to send it.\n"
            : request.method == "GET" || request.method == "HEAD" || request.isCORSPreflight
            ? "Kiosk's proxy is offline and has no stored answer for \(request.method) \(request.url.absoluteString): it was "
                + "never fetched through the proxy (or not with this request's credentials and headers), or its answer was not "
                + "one to keep (it said no-store, say, or came while the cache was off). Go online to fetch it.\n"
            : "Kiosk's proxy is offline: a \(request.method) is not sent, and only GET and HEAD answers (and browsers' CORS "
                + "preflights) are stored.\n"
        var response = HTTPResponse(status: 504, headers: ["Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store"],
                                    body: Data(text.utf8), url: request.url)
        // Asked for nothing but a stored answer is no sign of being offline: the detail says which it was.
        mark(&response, CacheStatus(onlyIfCached ? .onlyIfCached : .offline, forward: forward))
        return response
    }

    /// Notes the decision on the answer: its `Cache-Status` field (after any an upstream cache sent) and for the log.
    /// An upstream's value that is no RFC 8941 List is dropped: a client would discard the whole field, Kiosk's part too.
    private static func mark(_ response: inout HTTPResponse, _ status: CacheStatus) {
        let upstream = response.headers.values(for: CacheStatus.headerName)
        let kept = upstream.isEmpty || CacheStatus.isValidList(upstream.joined(separator: ", ")) ? upstream : []
        response.headers.removeAll(named: CacheStatus.headerName)
        response.headers.add(name: CacheStatus.headerName, value: (kept + [status.headerValue]).joined(separator: ", "))
        response.cacheStatus = status
    }

    /// Notes a write to the cache that failed (a full disk): the answer goes unstored, the proxy goes on, and the first
    /// failure is said.
    private func warnOnce(_ error: any Error) {
        let reason = (error as? KioskError)?.description ?? String(describing: error)
        let first = failure.withLock { failure in
            defer { failure = reason }
            return failure == nil
        }
        if first { warn("The proxy cache cannot store answers (\(reason)); the proxy goes on without storing them.") }
    }

    // MARK: - RFC 9111

    /// Statuses a cache may store without explicit freshness (RFC 9110 §15.1, "heuristically cacheable"; 451, RFC 7725 §3).
    static let cacheableByDefault: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 451, 501]

    /// Whether an answer with these fields, to a request with `asked`, may not be kept whatever its status: `no-store` on
    /// either side, or `Vary: *` (RFC 9111 §3).
    static func forbidsKeeping(_ fields: HTTPHeaderFields, status: Int, asked: HTTPHeaderFields) -> Bool {
        let control = control(of: fields, shared: false)
        // `must-understand` (RFC 9111 §5.2.2.3): an answer of a status whose caching rules this cache does not know is not
        // kept; of one it does, its `no-store` — there for caches that do not understand the directive — is ignored.
        let noStore = control.mustUnderstand ? !understoodStatuses.contains(status) : control.noStore
        return noStore || self.control(of: asked, shared: false).noStore
            || Key.varyNames(fields).split(separator: ",").contains("*")
    }

    /// The final status codes whose caching rules this cache knows: RFC 9110's (§15), as `must-understand` asks.
    static let understoodStatuses: Set<Int> = Set(200...206).union(Set(300...308).subtracting([306]))
        .union(Set(400...417)).union([421, 422, 426]).union(Set(500...505))

    /// Whether a request with `headers` names a validator (`If-None-Match`, `If-Modified-Since`): a 304 to it revalidated.
    static func isConditional(_ headers: HTTPHeaderFields) -> Bool {
        headers["If-None-Match"] != nil || headers["If-Modified-Since"] != nil
    }

    /// Whether the cache is a shared one to `request`'s client (RFC 9111 §1): to one on another machine (`--proxy-auth`),
    /// whose answers other machines' clients are given too, it is; to this machine's apps, their user's own, private.
    static func isShared(_ request: HTTPRequest) -> Bool { request.purpose == .proxiedForNetwork }

    /// The answer's Cache-Control as this cache reads it for a client to which it is `shared` or private.
    static func control(of headers: HTTPHeaderFields, shared: Bool) -> CacheControl {
        let control = CacheControl(headers.values(for: "Cache-Control").joined(separator: ","))
        return shared ? control.asShared : control
    }

    /// Whether this cache keeps `response`, the answer to `request` as the proxy got it: `isKept`, and over HTTPS only when
    /// the upstream's certificate was checked (`verifiesUpstream`).
    private func mayKeep(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
        Self.isKept(response, for: request) && isChecked(request)
    }

    /// Whether the answer to `request` came from an upstream whose certificate was checked, or over plain HTTP: not an
    /// HTTPS one with `--insecure-upstream`, whose 304 must not renew a stored answer either.
    private func isChecked(_ request: HTTPRequest) -> Bool {
        verifiesUpstream || request.url.scheme?.lowercased() != "https"
    }

    /// Whether this cache keeps `response`, the answer to `request` (the proxy's own, an archive's): what RFC 9111 §3 lets
    /// it store (`isStorable`), and of a CORS preflight's only one that allowed the origin that asked (by name, or any): a
    /// refusal is the upstream's to say again.
    static func isKept(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
        let allowed = response.headers["Access-Control-Allow-Origin"]?.trimmingCharacters(in: .whitespaces)
        return isStorable(response, for: request)
            && (!request.isCORSPreflight
                || ((200..<300).contains(response.status) && (allowed == "*" || allowed == request.headers["Origin"])))
    }

    /// The names of the request fields `response`'s stored variants go by: its `Vary`'s, and a preflight's origin, method
    /// and headers asked (the Fetch standard's CORS-preflight cache keys its answers so).
    static func storedVary(_ response: HTTPResponse, preflight: Bool) -> String {
        var varied = response.headers
        if preflight { varied.add(name: "Vary", value: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers") }
        return Key.varyNames(varied)
    }

    /// Whether RFC 9111 §3 lets this cache store the answer to `request` (a GET): `private` answers not for a client to
    /// which it is shared (§5.2.2.7), `s-maxage` explicit freshness only for one.
    static func isStorable(_ response: HTTPResponse, for request: HTTPRequest) -> Bool {
        // A 304 is never a representation of its own: it only renews one stored (`forward`), and stored, it would
        // answer an app that has nothing cached with an empty body.
        // A 206 is a part, not the representation (nor an answer to a Range) — unless it holds the whole of it (`isWhole`).
        let whole = isWhole(response)
        guard response.stream == nil, !response.isEdited, !response.isMocked, (200...599).contains(response.status),
              response.status != 206 || whole, response.status != 304, request.headers["Range"] == nil || whole else { return false }
        if forbidsKeeping(response.headers, status: whole ? 200 : response.status, asked: request.headers) { return false }
        let shared = isShared(request)
        let control = control(of: response.headers, shared: shared)
        if shared && control.isPrivate { return false }
        // (Read as shared, `s-maxage` is `maxAge`.)
        let explicit = response.headers["Expires"] != nil || control.maxAge != nil || control.isPublic || control.isPrivate
        return explicit || cacheableByDefault.contains(whole ? 200 : response.status)
    }

    /// Whether `response` is a 206 holding its whole representation (`Content-Range: bytes 0-(N-1)/N`, N bytes): what a
    /// media element's `Range: bytes=0-` gets (browsers fetch every audio and video so). RFC 9111 §3.4 lets a cache make
    /// the complete answer of it: it is stored as its 200 (`storedForm`), so that offline a player gets it, whole or in
    /// the ranges it asks for.
    static func isWhole(_ response: HTTPResponse) -> Bool {
        guard response.status == 206, let range = response.headers["Content-Range"]?.trimmingCharacters(in: .whitespaces).lowercased(),
              range.hasPrefix("bytes 0-") else { return false }
        let parts = range.dropFirst("bytes 0-".count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let last = Int(parts[0]), let total = Int(parts[1]), total > 0 else { return false }
        return last == total - 1 && response.body.count == total
    }

    /// The status and fields an answer is stored with: a whole 206's as its 200 (no `Content-Range`, its length said).
    static func storedForm(_ response: HTTPResponse) -> (status: Int, headers: HTTPHeaderFields) {
        guard isWhole(response) else { return (response.status, storedHeaders(response.headers)) }
        var headers = storedHeaders(response.headers)
        headers.removeAll(named: "Content-Range")
        headers["Content-Length"] = String(response.body.count)
        return (200, headers)
    }

    /// What is kept of the answer's fields: not the hop-by-hop ones (the app's copy is without them too), not a
    /// Cache-Status (made anew at each use), and of its cookies only that it set one (one empty `Set-Cookie`:
    /// `ProxyCacheEntry.setsCookie`). Its `Age` is kept: the age it had when it came counts in its age from then on (RFC
    /// 9111 §4.2.3), and each use gives the app its current age instead.
    static func storedHeaders(_ headers: HTTPHeaderFields) -> HTTPHeaderFields {
        var kept = HTTPHeaderFields(HTTPSyntax.endToEnd(headers.fields))
        let setsCookie = headers["Set-Cookie"] != nil || headers["Set-Cookie2"] != nil
        for name in ["Set-Cookie", "Set-Cookie2", CacheStatus.headerName] { kept.removeAll(named: name) }
        if setsCookie { kept.add(name: "Set-Cookie", value: "") }
        return kept
    }

    /// Whether the upstream's answer is the stored one again: the same status, body and fields, `Date` and `Age` aside.
    static func isUnchanged(_ entry: ProxyCacheEntry, _ response: HTTPResponse) -> Bool {
        guard entry.status == response.status, entry.body == response.body else { return false }
        let fields = { (headers: HTTPHeaderFields) in
            storedHeaders(headers).filter { !["date", "age"].contains($0.name.lowercased()) }.map { [$0.name.lowercased(), $0.value] }
        }
        return fields(entry.headers) == fields(response.headers)
    }

    /// What is left of `entry`'s freshness lifetime (Cache-Status's `ttl`): none once a write to its URL marked it
    /// changed (RFC 9111 §4.4: an invalidated answer is not fresh, whatever its lifetime said).
    static func remainingFreshness(of entry: ProxyCacheEntry, at now: Date, shared: Bool) -> TimeInterval {
        let left = freshnessLifetime(of: entry, shared: shared) - currentAge(of: entry, at: now)
        return entry.changedAt == nil ? left : min(0, left)
    }

    /// RFC 9111 §4.2.1's freshness lifetime, in seconds: `max-age` (`s-maxage` first where the cache is `shared`), else
    /// `Expires` less `Date` (an invalid `Expires` is already expired), else — for a status cacheable by default with a
    /// `Last-Modified` — the heuristic of §4.2.2, a tenth of the time since it was modified, at most a day; else 0.
    /// `no-cache` makes it 0: stored, but revalidated before each use.
    static func freshnessLifetime(of entry: ProxyCacheEntry, shared: Bool) -> TimeInterval {
        freshnessLifetime(status: entry.status, headers: entry.headers, receivedAt: entry.responseTime, shared: shared)
    }

    /// Whether an answer with this status and these fields, received `at`, is fresh then: its freshness lifetime beyond its
    /// age as it came (RFC 9111 §4.2.3: its `Age`, or the time since its `Date` when that is more).
    static func isFreshOnArrival(status: Int, headers: HTTPHeaderFields, at now: Date, shared: Bool) -> Bool {
        let lifetime = freshnessLifetime(status: status, headers: headers, receivedAt: now, shared: shared)
        guard lifetime > 0 else { return false }
        let ageValue = TimeInterval(CacheControl.age(headers["Age"]))
        let apparentAge = headers["Date"].flatMap(HTTPDate.parse).map { max(0, now.timeIntervalSince($0)) } ?? 0
        return lifetime > max(ageValue, apparentAge)
    }

    /// `freshnessLifetime(of:)` of an answer with this status and these fields, received at `receivedAt` (its date when it
    /// carries no `Date`).
    static func freshnessLifetime(status: Int, headers: HTTPHeaderFields, receivedAt: Date, shared: Bool) -> TimeInterval {
        let control = control(of: headers, shared: shared)
        if control.noCache { return 0 }
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        // The answer's Date is read only when a date is reckoned from it.
        let date = { headers["Date"].flatMap(HTTPDate.parse) ?? receivedAt }
        if let expires = headers["Expires"] {
            return HTTPDate.parse(expires).map { max(0, $0.timeIntervalSince(date())) } ?? 0
        }
        if cacheableByDefault.contains(status), let modified = headers["Last-Modified"].flatMap(HTTPDate.parse) {
            return min(86_400, max(0, date().timeIntervalSince(modified) / 10))
        }
        return 0
    }

    /// The request's Cache-Control, with `Pragma: no-cache` read as `no-cache` when it has none (RFC 9111 §5.4).
    static func requestDirectives(_ headers: HTTPHeaderFields) -> CacheControl {
        let values = headers.values(for: "Cache-Control")
        if values.isEmpty, headers.values(for: "Pragma").contains(where: { $0.lowercased().contains("no-cache") }) {
            return CacheControl("no-cache")
        }
        return CacheControl(values.joined(separator: ","))
    }

    /// The request to revalidate `entry` with: the app's own when it is conditional already, else with the stored
    /// `ETag` and `Last-Modified` as If-None-Match and If-Modified-Since (`added`).
    static func conditional(_ request: HTTPRequest, on entry: ProxyCacheEntry) -> (request: HTTPRequest, added: Bool) {
        guard request.headers["If-None-Match"] == nil, request.headers["If-Modified-Since"] == nil else { return (request, false) }
        var conditional = request
        if let etag = entry.headers["ETag"] { conditional.headers["If-None-Match"] = etag }
        if let modified = entry.headers["Last-Modified"] { conditional.headers["If-Modified-Since"] = modified }
        return (conditional, conditional.headers != request.headers)
    }

    /// RFC 9111 §4.2.3's current_age, in seconds.
    static func currentAge(of entry: ProxyCacheEntry, at now: Date) -> TimeInterval {
        currentAge(headers: entry.headers, requestTime: entry.requestTime, responseTime: entry.responseTime, at: now)
    }

    /// RFC 9111 §4.2.3's current_age, in seconds, of an answer with `headers` asked at `requestTime`, come at `responseTime`.
    static func currentAge(headers: HTTPHeaderFields, requestTime: Date, responseTime: Date, at now: Date) -> TimeInterval {
        let date = headers["Date"].flatMap(HTTPDate.parse) ?? responseTime
        let apparentAge = max(0, responseTime.timeIntervalSince(date))
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        let ageValue = TimeInterval(CacheControl.age(headers["Age"]))
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        // In whole seconds, as `Age` says it (RFC 9111 §5.1): `ttl` is then the lifetime less the `Age` sent beside it,
        // the two adding up to the lifetime as an app reading them expects. A sum past 2^31 is 2^31 (§1.2.2): an app
        // reading `Age` into 32 bits must not see it wrap to a young answer.
        let age = (correctedInitialAge + max(0, now.timeIntervalSince(responseTime))).rounded(.down)
        return min(age, TimeInterval(CacheControl.maxDeltaSeconds))
    }

    /// Whether a 304 to a request `asked` with its conditions speaks of the stored `entry`, and so may renew it (RFC 9111
    /// §4.3.4): its entity tag is the entry's (compared strongly unless either is weak), or, without one, its
    /// Last-Modified is not another date. A 304 with no validator at all answers the request's conditions, so it is the
    /// entry's only when they were the entry's own validator (the proxy's revalidation, or an app holding the same
    /// copy): an app's `If-Modified-Since` later than the stored copy's date, or another ETag, says nothing of it.
    static func speaksOf(_ notModified: HTTPHeaderFields, _ entry: ProxyCacheEntry, askedWith asked: HTTPHeaderFields) -> Bool {
        if let tag = notModified["ETag"].flatMap(EntityTag.init) {
            guard let stored = entry.headers["ETag"].flatMap(EntityTag.init) else { return false }
            return tag.isWeak || stored.isWeak ? tag.opaque == stored.opaque : tag == stored
        }
        if let modified = notModified["Last-Modified"], let stored = entry.headers["Last-Modified"] {
            return HTTPDate.parse(modified) == HTTPDate.parse(stored)
        }
        if !asked.values(for: "If-None-Match").isEmpty {
            guard let etag = entry.headers["ETag"].flatMap(EntityTag.init) else { return false }
            return EntityTag.list(asked.values(for: "If-None-Match")).tags.contains { $0.opaque == etag.opaque }
        }
        if let since = asked["If-Modified-Since"].flatMap(HTTPDate.parse) {
            return entry.headers["Last-Modified"].flatMap(HTTPDate.parse) == since
        }
        return false
    }

    /// Whether a HEAD's 200 speaks of another representation than the stored GET answer's (RFC 9111 §4.3.5): an ETag or
    /// Last-Modified that both carry and that differ, or a Content-Length that differs — but for a HEAD's length of 0
    /// beside matching validators (a HEAD handler that never counts its body, a common slip).
    static func headSaysChanged(_ head: HTTPHeaderFields, _ stored: HTTPHeaderFields) -> Bool {
        /// Whether the two values of `name` differ as `read` reads them; nil when either lacks it.
        func differ<Value: Equatable>(_ name: String, _ read: (String) -> Value?) -> Bool? {
            guard let new = head[name].flatMap(read), let old = stored[name].flatMap(read) else { return nil }
            return new != old
        }
        // Tags weakly (a server may say W/ on one and not the other), dates as dates.
        let validators = [differ("ETag") { EntityTag($0)?.opaque }, differ("Last-Modified", HTTPDate.parse)].compactMap { $0 }
        if validators.contains(true) { return true }
        let length = { (value: String) in Int(value.trimmingCharacters(in: .whitespaces)) }
        if !validators.isEmpty, head["Content-Length"].flatMap(length) == 0 { return false }
        return differ("Content-Length", length) == true
    }

    /// An entity tag (RFC 9110 §8.8.3): `W/` before the quotes makes it weak; what is between them, commas and `W/`
    /// included, is its opaque part.
    struct EntityTag: Equatable {
        let isWeak: Bool
        let opaque: String

        /// The first tag of a field's value (an `ETag`), nil when there is none.
        init?(_ value: String) {
            guard let first = Self.list([value]).tags.first else { return nil }
            self = first
        }

        private init(isWeak: Bool, opaque: String) {
            self.isWeak = isWeak
            self.opaque = opaque
        }

        /// The tags of an `If-None-Match` (its lines one list), and whether it is `*`. A tag a server sent without its
        /// quotes (they are required, but some omit them) is read up to the next comma, as written.
        static func list(_ values: [String]) -> (star: Bool, tags: [EntityTag]) {
            var star = false
            var tags: [EntityTag] = []
            for value in values {
                var rest = Substring(value)
                while true {
                    rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
                    guard !rest.isEmpty else { break }
                    let isWeak = rest.hasPrefix("W/")
                    if isWeak { rest = rest.dropFirst(2) }
                    if rest.first == "\"" {
                        let body = rest.dropFirst()
                        let close = body.firstIndex(of: "\"") ?? body.endIndex
                        tags.append(EntityTag(isWeak: isWeak, opaque: String(body[..<close])))
                        rest = close == body.endIndex ? "" : body[body.index(after: close)...]
                    } else {
                        let end = rest.firstIndex(of: ",") ?? rest.endIndex
                        let bare = rest[..<end].trimmingCharacters(in: .whitespaces)
                        if bare == "*" && !isWeak { star = true } else { tags.append(EntityTag(isWeak: isWeak, opaque: bare)) }
                        rest = rest[end...]
                    }
                }
            }
            return (star, tags)
        }
    }

    /// Whether the app's own conditional request is satisfied by the stored answer: If-None-Match naming its ETag
    /// (weak comparison: the opaque parts equal), else If-Modified-Since no earlier than its Last-Modified — or, for an
    /// answer without one, than its Date, else the time it was received (RFC 9110 §13.2.2, RFC 9111 §4.3.2).
    static func validatorMatches(_ request: HTTPHeaderFields, _ stored: HTTPHeaderFields, receivedAt: Date? = nil) -> Bool {
        let asked = request.values(for: "If-None-Match")
        if !asked.isEmpty {
            let candidates = EntityTag.list(asked)
            // `*` matches any current representation, one without an ETag too (RFC 9110 §13.1.2).
            if candidates.star { return true }
            guard let etag = stored["ETag"].flatMap(EntityTag.init) else { return false }
            return candidates.tags.contains { $0.opaque == etag.opaque }
        }
        if let since = request["If-Modified-Since"].flatMap(HTTPDate.parse),
           let modified = stored["Last-Modified"].flatMap(HTTPDate.parse) ?? stored["Date"].flatMap(HTTPDate.parse) ?? receivedAt {
            return modified <= since
        }
        return false
    }

    /// Failures that are the upstream's (not the request's or the policy's): a timeout, or a connection that broke.
    private static func isUpstreamFailure(_ error: KioskError) -> Bool {
        switch error {
        case .timeout, .stalledBody, .truncatedBody, .unreadableAnswer: true
        case .transport: !isDistrusted(error)
        default: false
        }
    }

    /// Whether answers of `request`'s method and URL are held for other credentials or headers, as only this machine's own
    /// apps are told: a client on another machine would learn that someone's answer is there.
    private static func othersHeld(for request: HTTPRequest, in cache: ProxyCache?) -> Bool {
        request.purpose != .proxiedForNetwork && ((try? cache?.holdsAnswers(method: request.method, url: Key.normalized(request.url))) ?? false)
    }

    /// Whether the proxy answers `error` with its own 502 or 504 marked with what the cache did: the upstream could not be
    /// reached, failed, or could not be trusted.
    private static func isMarkedFailure(_ error: KioskError) -> Bool {
        error.isConnectivityFailure || isUpstreamFailure(error) || isDistrusted(error)
    }

    /// Whether the upstream's certificate (or its TLS version) was refused: a failure nothing stored may stand in for.
    private static func isDistrusted(_ error: KioskError) -> Bool {
        if case .transport(_, let message) = error { UpstreamTransport.isTrustFailure(message) } else { false }
    }

    /// The methods that change nothing on the server (RFC 9110 §9.2.1); an answer to any other may change what the
    /// cache holds for its URL.
    static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    /// After an unsafe request (POST, PUT, DELETE, PATCH...) the upstream answered without error (2xx or 3xx), marks
    /// every answer stored for its URL — each variant, each identity — and for the URLs its `Location` and
    /// `Content-Location` name on the same origin as changed (RFC 9111 §4.4): an app that changes a record and reads it
    /// back must not be given the record as it was, so such an answer is given only once the upstream confirms it, or
    /// when it cannot answer at all (fallback, offline: the last list an app saw stays readable offline after it adds to
    /// it). Whatever the mode, since a stored answer outlives a switch to `off`.
    private func invalidate(after request: HTTPRequest, answered response: HTTPResponse) {
        guard let cache, !Self.safeMethods.contains(request.method), (200..<400).contains(response.status) else { return }
        var urls = [Key.normalized(request.url)]
        // The same origin (RFC 9111 §4.4), its scheme's own port written or not.
        let port = { (url: URL) in url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        for name in ["Location", "Content-Location"] {
            guard let value = response.headers[name], let target = URL(string: value, relativeTo: request.url)?.absoluteURL,
                  target.scheme?.lowercased() == request.url.scheme?.lowercased(),
                  target.host(percentEncoded: false)?.lowercased() == request.url.host(percentEncoded: false)?.lowercased(),
                  port(target) == port(request.url) else { continue }
            urls.append(Key.normalized(target))
        }
        do {
            try cache.invalidate(urls: urls, at: now())
        } catch {
            // Not marked: the stored answers would be served though the upstream changed them.
            warnOnce(error)
        }
    }

    /// What hides `request`'s own credentials, nil when it carries none.
    private static func hider(for request: HTTPRequest, _ redactor: Redactor) -> Redactor? {
        let credentials = redactor.credentials(of: request)
        return credentials.isEmpty ? nil : Redactor(queryItems: [], headers: []).hiding(credentials)
    }

    /// `fields` with what `hider` hides hidden, in a name too (an upstream echoing a token as a field's name); nil when they
    /// hold none of it.
    private static func hidden(_ fields: HTTPHeaderFields, _ hider: Redactor) -> HTTPHeaderFields? {
        let shown = HTTPHeaderFields(fields.map { (name: hider.scrub($0.name), value: hider.scrub($0.value)) })
        return shown == fields ? nil : shown
    }

    /// A request's cache key.
    struct Key {
        let url: String
        let host: String
        /// SHA-256 of the request's credential fields (`identityFields`), hex; "" without any; for a client on another
        /// machine, after `ProxyCacheAnswer.networkCredentials`.
        let credentials: String
        /// Whether the request's client is on another machine, to which the cache is shared (`isShared`).
        var isShared: Bool { credentials.hasPrefix(ProxyCacheAnswer.networkCredentials) }
        let headers: HTTPHeaderFields

        /// The request fields that say who asks besides Authorization and Cookie (`Redactor.identityFields`), whether or
        /// not the upstream's `Vary` names them.
        static let identityFields = Redactor.identityFields
        private static let listedIdentityFields = Set(identityFields)

        /// The fields of `headers` that say who asks besides Authorization and Cookie, lowercased, in the order the key
        /// counts them: the listed ones first (an answer stored before the others were counted keeps its key), then
        /// those whose names say they hold a secret (`X-Client-Secret`, `Redactor.isIdentityField`), sorted.
        static func identityFieldNames(in headers: HTTPHeaderFields) -> [String] {
            var others: Set<String> = []
            for field in headers {
                let name = field.name.lowercased()
                if !listedIdentityFields.contains(name), Redactor.isIdentityField(name) { others.insert(name) }
            }
            return identityFields + others.sorted()
        }

        /// The names of the fields the request's credentials came in (Authorization, Cookie, X-Api-Key…), as it spelled
        /// them, once each: what an export names of an identity's answer, never their values.
        static func credentialFields(_ headers: HTTPHeaderFields) -> [String] {
            var names: [String] = []
            for name in ["authorization", "cookie"] + identityFieldNames(in: headers) {
                if let field = headers.first(where: { HTTPHeaderFields.sameName($0.name, name) }) { names.append(field.name) }
            }
            return names
        }

        private init(url: String, host: String, credentials: String, headers: HTTPHeaderFields) {
            self.url = url
            self.host = host
            self.credentials = credentials
            self.headers = headers
        }

        /// The key of the same request asked with no credentials (by this machine, or by one on the network): what anyone
        /// gets; nil for a request that sends none.
        var anonymous: Key? {
            let none = isShared ? ProxyCacheAnswer.networkCredentials : ""
            return credentials == none ? nil : Key(url: url, host: host, credentials: none, headers: headers)
        }

        init(_ request: HTTPRequest) {
            url = Self.normalized(request.url)
            host = request.url.host(percentEncoded: false)?.lowercased() ?? ""
            headers = request.headers
            let authorization = request.headers.values(for: "Authorization")
            let cookies = request.headers.values(for: "Cookie")
            // Each other credential field sent, by name: appended after the two, so that an answer stored for
            // Authorization or Cookie alone keeps the key it had before these were counted.
            var others = ""
            for name in Self.identityFieldNames(in: request.headers) {
                let values = request.headers.values(for: name)
                if !values.isEmpty { others += "\n" + name + "\n" + values.joined(separator: "\n") }
            }
            let digest: String
            if authorization.isEmpty && cookies.isEmpty && others.isEmpty {
                digest = ""
            } else {
                let text = "authorization\n" + authorization.joined(separator: "\n") + "\ncookie\n" + cookies.joined(separator: "; ") + others
                digest = Hex.encode(SHA256.hash(data: Data(text.utf8)))
            }
            // A client on another machine has answers of its own (`ProxyCacheAnswer.networkCredentials`).
            credentials = request.purpose != .proxiedForNetwork ? digest
                : ProxyCacheAnswer.networkCredentials + (digest.isEmpty ? "" : ":" + digest)
        }

        /// The URL as a key: one spelling of one resource (RFC 9110 §4.2.3, RFC 3986 §6.2.2) — scheme and host
        /// lowercased, the scheme's own port left out, no fragment, percent-escapes in capitals, those of unreserved
        /// characters undone — so that an archive's `HTTP://Host:80/caf%c3%a9/%7Euser#top` and an app's
        /// `http://host/caf%C3%A9/~user` are one entry. Most URLs are in that form already, and are taken as they are.
        static func normalized(_ url: URL) -> String { normalizedEscapes(withoutEscapeCase(url)) }

        /// The URL with scheme, host, port and fragment as `normalized` says.
        private static func withoutEscapeCase(_ url: URL) -> String {
            let text = url.absoluteString
            let authorityEnd = text.utf8.firstIndex(of: UInt8(ascii: "/")).flatMap { slash in
                text.utf8[text.utf8.index(after: slash)...].dropFirst().firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }
            } ?? text.utf8.endIndex
            let head = text.utf8[..<authorityEnd]
            let plain = !head.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") } && url.fragment == nil
                && (url.port == nil || url.port != (url.scheme?.lowercased() == "https" ? 443 : 80))
            guard !plain, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return text }
            components.scheme = components.scheme?.lowercased()
            components.host = components.host?.lowercased()
            if components.port == (components.scheme == "https" ? 443 : 80) { components.port = nil }
            components.fragment = nil
            return components.string ?? text
        }

        /// `text` with its percent-escapes in one form: the hex digits in capitals (`%c3%a9` → `%C3%A9`), and an unreserved
        /// character's escape as the character (`%7E` → `~`, `%41` → `A`: RFC 3986 §2.3 has them equivalent, and servers
        /// read them as one); unchanged when there is nothing to change (most URLs have no escape at all, and are not copied).
        static func normalizedEscapes(_ text: String) -> String {
            guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
            func hexValue(_ byte: UInt8) -> UInt8? {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
                case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
                case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
                default: nil
                }
            }
            func isUnreserved(_ byte: UInt8) -> Bool {
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || "-._~".utf8.contains(byte)
            }
            let bytes = Array(text.utf8)
            var out: [UInt8] = [], changed = false, position = 0
            out.reserveCapacity(bytes.count)
            while position < bytes.count {
                guard bytes[position] == UInt8(ascii: "%"), position + 2 < bytes.count,
                      let high = hexValue(bytes[position + 1]), let low = hexValue(bytes[position + 2]) else {
                    out.append(bytes[position])
                    position += 1
                    continue
                }
                let octet = high << 4 | low
                if isUnreserved(octet) {
                    out.append(octet)
                    changed = true
                } else {
                    let digits = [bytes[position + 1], bytes[position + 2]].map { $0 >= UInt8(ascii: "a") ? $0 - 0x20 : $0 }
                    changed = changed || digits != [bytes[position + 1], bytes[position + 2]]
                    out += [UInt8(ascii: "%")] + digits
                }
                position += 3
            }
            return changed ? String(decoding: out, as: UTF8.self) : text
        }

        /// The lowercased, sorted names an answer's `Vary` lists, comma-joined ("" for none).
        static func varyNames(_ headers: HTTPHeaderFields) -> String {
            Set(headers.values(for: "Vary").flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty })
                .sorted().joined(separator: ",")
        }

        /// The request's values of the `names` (as `varyNames` writes them), normalized as RFC 9111 §4.1 allows
        /// (whitespace around commas); nil for `*`, which never matches.
        func variant(for names: String) -> String? {
            guard !names.isEmpty else { return "" }
            var parts: [String] = []
            for name in names.split(separator: ",").map(String.init) {
                if name == "*" { return nil }
                // A field the request lacks matches only its lack (RFC 9111 §4.1), not one sent empty (`name=`).
                let values = headers.values(for: name)
                guard !values.isEmpty else {
                    parts.append(name)
                    continue
                }
                var members = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
                // A preflight's list of header names is one whatever their case and order (`Authorization, X-Id` is what
                // a browser sends as `authorization,x-id`).
                if name == "access-control-request-headers" { members = members.map { $0.lowercased() }.sorted() }
                let value = members.joined(separator: ",")
                // A secret field (`Vary: Cookie`) is matched by its digest: the file never holds the credential itself.
                let kept = Redactor.standard.namesSecretHeader(name) ? "sha256:" + Hex.encode(SHA256.hash(data: Data(value.utf8))) : value
                parts.append(name + "=" + kept)
            }
            return parts.joined(separator: "\n")
        }
    }
}
