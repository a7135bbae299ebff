public import Foundation
public import KioskCore
package import KioskStore
import Synchronization

/// The network debugger, as the faces use it: the request log (read, exported, cleared), breakpoints,
/// mock rules, HAR import, replay and the checking of edited answers. It never reaches the store of
/// catalog data; what it sends goes through Kiosk's whole transport stack.
public final class Debugger: Sendable {
    /// Per-endpoint breakpoints and the exchanges paused now.
    public let breakpoints: Breakpoints
    /// The "map local" rules answered before the upstream.
    public let mocks: MockRules
    /// The numbered changes live consoles follow (new exchanges, a cleared log, pauses).
    public let events: DebugEvents
    /// The rules that rewrite answers (or fail requests) without pausing.
    public let rules: RewriteRules
    let log: RequestLog?
    let sources: [SourceID: any CatalogSource]
    let send: @Sendable (HTTPRequest) async throws -> HTTPResponse
    /// Sends an app's request again through `kiosk proxy`'s pipeline.
    let sendProxied: @Sendable (HTTPRequest) async throws -> HTTPResponse
    /// Why there is no request log though capture is on (the file could not be opened); nil when the log is open or
    /// capture is off by configuration.
    public let logProblem: String?
    /// The names of Kiosk's own endpoints: a record of any other name is an app's exchange through the proxy.
    let ownEndpoints: Set<String>
    /// The exchanges begun and not yet ended (nil: none are listed, capture off).
    let exchangesInFlight: ExchangesInFlight?
    private let pauseWatch: Task<Void, Never>
    /// Follows the log's file for records other processes stored while a live console listens.
    private let logWatch: Task<Void, Never>

    /// A debugger over `log` (nil: capture is off), sending replays of Kiosk's own requests with `send` (the top of
    /// the transport stack) and of apps' with `sendProxied` (the proxy's pipeline), checking edits with the
    /// `sources`' decoders; its events are numbered under `epoch`; `inFlight` lists the exchanges the capture has begun.
    package init(breakpoints: Breakpoints, mocks: MockRules, rules: RewriteRules, log: RequestLog?, logProblem: String? = nil,
                 sources: [SourceID: any CatalogSource], epoch: String, inFlight: ExchangesInFlight? = nil,
                 send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse,
                 sendProxied: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        self.breakpoints = breakpoints
        self.mocks = mocks
        self.rules = rules
        self.log = log
        self.logProblem = log == nil ? logProblem : nil
        self.sources = sources
        self.send = send
        self.sendProxied = sendProxied
        exchangesInFlight = inFlight
        ownEndpoints = Set(Self.endpoints(of: sources).map(\.name))
        let events = DebugEvents(epoch: epoch)
        self.events = events
        // The records announced so far, this process's and those another one stored (`kiosk sync`, a second `kiosk
        // proxy` on one data folder), which the watch below finds: each is announced once, whoever finds it first. Ids
        // are handed out in the order their transactions commit (one writer at a time), so a range stored here is
        // announced from the last one announced on: ids of another process's before it are committed already.
        // `gone`: the last one announced is known deleted (a clear said already), not to be said again each second.
        let announced = Mutex<(last: Int64, gone: Bool)>(((try? log?.newestID()) ?? 0, false))
        let announce: @Sendable (ClosedRange<Int64>) -> Void = { ids in
            let fresh = announced.withLock { state -> ClosedRange<Int64>? in
                guard ids.upperBound > state.last else { return nil }
                defer { state = (ids.upperBound, false) }
                return state.last + 1...ids.upperBound
            }
            if let fresh { events.publish(.stored(fresh)) }
        }
        log?.observe { change in
            switch change {
            case .stored(let ids): announce(ids)
            case .cleared:
                // Ids go on from where they were (AUTOINCREMENT): the next is announced as any other.
                announced.withLock { $0.gone = true }
                events.publish(.cleared)
            }
        }
        // Every second the file is looked at for what other processes stored, or cleared: the last record announced
        // gone means the log was emptied (eviction takes the oldest first, never the newest). With no console
        // listening, the place moves on silently, so one opened later is not sent what came before it.
        logWatch = Task { [log] in
            guard let log else { return }
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                let (last, gone) = announced.withLock { $0 }
                guard let (newest, lastKept) = try? log.newest(keeping: last) else { continue }
                guard events.subscriberCount > 0 else {
                    announced.withLock { state in
                        if !lastKept, state.last == last { state.gone = true }
                        if newest > state.last { state = (newest, false) }
                    }
                    continue
                }
                if !lastKept && !gone {
                    let first = announced.withLock { state -> Bool in
                        defer { state.gone = true }
                        return !state.gone && state.last == last
                    }
                    if first { events.publish(.cleared) }
                }
                if newest > last {
                    // At most the latest 1,000 at once: a console asks for the rows of what it is sent.
                    if newest - last > 1_000 { announced.withLock { state in if state.last == last { state.last = newest - 1_000 } } }
                    announce(last + 1...newest)
                }
            }
        }
        // Subscribed here, before the task runs, so that no pause is missed.
        let changes = breakpoints.changes()
        pauseWatch = Task { [weak breakpoints] in
            for await _ in changes {
                guard let breakpoints else { return }
                events.publish(.paused(count: breakpoints.paused.count))
            }
        }
    }

    // A debugger dropped without `stop()` (a CLI command's, a test's) leaves no task polling the log's file.
    deinit {
        pauseWatch.cancel()
        logWatch.cancel()
    }

    /// Ends the live consoles' streams and stops following pauses (the server is stopping).
    public func stop() {
        pauseWatch.cancel()
        logWatch.cancel()
        events.finishAll()
    }

    /// What a live console shows: the changes after `lastEventID` (see `DebugEvents.subscribe`), new
    /// exchanges read from the log through `filter` (its paging bounds and limit ignored), without bodies
    /// or headers (a row of the list; the request's page has the rest).
    public func liveUpdates(matching filter: RequestFilter, after lastEventID: DebugEvents.EventID?) -> LiveUpdates {
        let log = log
        return LiveUpdates(deliveries: events.subscribe(after: lastEventID)) { ids in
            guard let log else { return [] }
            return try log.committedRecords(ids, matching: filter).reversed()
        }
    }

    /// How long an exchange is in flight before a console lists it: a quick one is listed once, when it ends.
    public static let inFlightListedAfter: Duration = .seconds(1)

    /// The exchanges in flight for at least `minimumAge` that `filter` may select once they end (`RequestFilter.mayMatch`),
    /// the latest begun first, at most the filter's limit (a list's length); none while recording is paused.
    public func inFlight(matching filter: RequestFilter, olderThan minimumAge: Duration = inFlightListedAfter) -> [ExchangesInFlight.Exchange] {
        guard isRecording, let exchangesInFlight else { return [] }
        return Array(exchangesInFlight.snapshot(olderThan: minimumAge).lazy.filter(filter.mayMatch).prefix(max(1, filter.limit)))
    }

    /// The exchanges paused at breakpoints that `filter` may select (as `inFlight` reads it), the latest paused first: the
    /// live list shows them among those in flight, each leading to its pause. None while recording is paused.
    public func pausedInFlight(matching filter: RequestFilter, at now: Date = Date()) -> [PausedExchange] {
        guard isRecording else { return [] }
        return breakpoints.paused.sorted { $0.id > $1.id }.filter { paused in
            filter.mayMatch(ExchangesInFlight.Exchange(id: 0, startedAt: paused.pausedAt, elapsed: .seconds(max(0, now.timeIntervalSince(paused.pausedAt))),
                                                       method: paused.method, url: paused.url, source: paused.source, endpoint: paused.endpoint,
                                                       status: paused.status, received: nil, appClosed: paused.appClosed, contentType: nil))
        }
    }

    // MARK: The request log

    /// Whether a request log is open to read (capture on, or off with a log kept from before).
    public var hasRequestLog: Bool { log != nil }

    /// Whether exchanges are logged: false while the console's recording is paused (and without a log). Turning it
    /// on without a log does nothing.
    public var isRecording: Bool {
        get { log?.isRecording ?? false }
        set {
            guard let log else { return }
            let changed = log.isRecording != newValue
            log.isRecording = newValue
            // Every open console shows the switch and its banner: told, not left saying "Live" over a log that stopped.
            if changed { events.publish(.recording(newValue)) }
        }
    }

    /// How many exchanges this process answered and could not log (more came than the log could write, or a write
    /// failed); 0 without a log.
    public var unloggedCount: Int { log?.droppedCount ?? 0 }

    private func requestLog() throws -> RequestLog {
        guard let log else {
            if let logProblem { throw KioskError.storage(logProblem) }
            throw KioskError.invalidRequest("Capture is off, so there is no request log (set \"capture\": true in the configuration).")
        }
        return log
    }

    /// The records matching `filter`, newest first, without bodies; queued records are written first, so a
    /// list shows the request just made.
    public func records(matching filter: RequestFilter) throws -> [RequestRecord] {
        try requestLog().records(matching: filter)
    }

    /// One record with its bodies, or nil when there is none with this id (or it was evicted).
    public func record(id: Int64) throws -> RequestRecord? { try requestLog().record(id: id) }

    /// How many records the log holds.
    public func count() throws -> Int { try requestLog().count() }

    /// How many exchanges are logged, and the newest one's id, read at one moment (`RequestLog.countAndNewestID`).
    public func countAndNewestID() throws -> (count: Int, newest: Int64) { try requestLog().countAndNewestID() }

    /// The differences between two logged exchanges (`before` the older one); nil when either is not in the log.
    public func diff(before: Int64, after: Int64) throws -> ExchangeDiff? {
        let log = try requestLog()
        guard let old = try log.record(id: before), let new = try log.record(id: after) else { return nil }
        return ExchangeDiff(before: old, after: new)
    }

    /// The latest answer logged before `record` to the same method and URL (what changed on revalidation; a GET is not
    /// compared with its CORS preflight): what it is compared with in one click; another URL of its endpoint is compared by id.
    public func previousAnswer(to record: RequestRecord) throws -> Int64? {
        try requestLog().previousAnswer(before: record.id, method: record.method, url: record.url)
    }

    /// The slowest endpoints, the bytes per source and the cache decisions over the records kept.
    public func insights() throws -> LogInsights { try requestLog().insights(ownEndpoints: Set(endpoints.map(\.name))) }

    /// Whether the log holds any catalog's request: a proxy's console offers the reader's filters only then.
    public func holdsCatalogTraffic() throws -> Bool { try requestLog().holdsSourceTraffic() }

    /// The hosts apps reached through `kiosk proxy`, as the log holds them (names no catalog endpoint has), most
    /// recently seen first: where the console offers their breakpoints.
    public func proxiedEndpoints() throws -> [SeenEndpoint] {
        try requestLog().endpointsWithoutSource(excluding: Set(endpoints.map(\.name)))
    }

    /// The hosts apps reached lately through `kiosk proxy` (as `proxiedEndpoints` names them), among the newest 5,000
    /// records, most recently seen first, at most `limit`: the console's host menu.
    public func proxiedHosts(limit: Int = 50) throws -> [String] {
        try requestLog().recentEndpointsWithoutSource(excluding: Set(endpoints.map(\.name)), limit: limit)
    }

    /// Empties the log; returns how many records it held.
    @discardableResult
    public func clear() throws -> Int {
        let log = try requestLog()
        let count = try log.count()
        try log.clear()
        return count
    }

    /// A HAR 1.2 archive of the records matching `filter` (its limit ignored), the newest `maximum` of them, oldest
    /// first, made as it is read (its `count` says how many it held once read to the end).
    public func harArchive(matching filter: RequestFilter, maximum: Int = 100_000) throws -> HAR.ArchiveStream {
        HAR.ArchiveStream(batches: try requestLog().fullRecordBatches(matching: filter, maximum: maximum))
    }

    /// Writes queued records now (before a process ends, or before another process reads the log).
    public func flush() throws { try log?.flush() }

    // MARK: Acting on exchanges

    /// Imports the archive at `path` (`-`: standard input) as mock rules: reads it (at most
    /// `HAR.maximumImportBytes`) and the body files its entries name beside it, adds the rules (their
    /// origin `har: <file name>`, their secrets redacted: `MockRules.redactingRecorded`) and returns what was imported
    /// and skipped, the rules with their ids.
    /// Throws `HAR.ImportError`, adding nothing, when the archive cannot be read or is malformed.
    public func importHAR(atPath path: String) throws -> HAR.Import {
        let data = try HAR.readArchive(atPath: path)
        guard path != "-" else { return try importHAR(data, origin: "har: standard input") }
        let file = URL(fileURLWithPath: path)
        return try importHAR(data, origin: "har: " + file.lastPathComponent, folder: file.deletingLastPathComponent())
    }

    /// Imports an archive already read as mock rules (see `HAR.importArchive`), `folder` being where its
    /// body files are (nil: nowhere, so an entry naming one refuses the archive); adds the rules and
    /// returns what was imported and skipped, the rules with their ids. Throws `HAR.ImportError`, adding
    /// nothing, for a malformed archive.
    public func importHAR(_ data: consuming Data, origin: String, folder: URL? = nil) throws -> HAR.Import {
        var result = try HAR.importArchive(data, origin: origin, folder: folder, ignoringQueryItems: mocks.ignoredQueryItems)
        if !result.rules.isEmpty { result.rules = try mocks.add(result.rules.map(mocks.redactingRecorded)) }
        return result
    }

    /// Checks a response body edited at a breakpoint the way the app will read it: a catalog endpoint's must be JSON
    /// that its source decodes (a list with at least one readable item and no unreadable one — a user-ordered list may
    /// be empty — or the item); an app's through `kiosk proxy`, which no decoder reads, well-formed JSON when
    /// `asJSON` (the paused answer was JSON), anything otherwise (a text answer is edited as text). Throws
    /// `OrderedJSON.ParseError` for a body that is not JSON, `malformedResponse` with the JSON path of the first
    /// problem for one its source cannot read.
    public func validateEdit(endpoint: String, url: URL, status: Int, body: Data, asJSON: Bool = true) throws {
        let catalog = sources.values.first(where: { $0.endpoints.contains { $0.name == endpoint } })
        guard asJSON || catalog != nil else { return }
        _ = try OrderedJSON.parse(body)
        guard (200..<300).contains(status) else { return }
        guard let source = catalog, let description = source.endpoints.first(where: { $0.name == endpoint }) else { return }
        let response = HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: body, url: url)
        switch description.answer {
        case .page:
            let page = try source.decodeList(response, for: PageRequest(source: source.id, collection: description.collection))
            if let issue = page.skipped.first { throw KioskError.malformedResponse(path: issue.path, message: issue.message) }
            if page.items.isEmpty, source.ordering != .user {
                throw KioskError.malformedResponse(path: "$", message: "no item could be read")
            }
        case .item:
            _ = try source.decodeDetail(response, itemID: url.lastPathComponent)
        case .items:
            let request = HTTPRequest(method: "GET", url: url, source: source.id, endpoint: endpoint)
            let (_, skipped) = try source.decodeLinkedItems(response, for: request)
            if let issue = skipped.first { throw KioskError.malformedResponse(path: issue.path, message: issue.message) }
        }
    }

    /// Every endpoint Kiosk calls, catalog by catalog, then the image fetches: the console's registry.
    public var endpoints: [EndpointDescription] { Self.endpoints(of: sources) }

    /// Whether breakpoints may be set on `endpoint`: one of the catalogs' endpoints, or the name an app's exchanges
    /// through `kiosk proxy` are logged and paused under — their host, with the port when not the scheme's own
    /// (`api.example.com`, `localhost:3000`, `[::1]:8080`), lowercased as the proxy writes it.
    /// A name that starts like a catalog's endpoint but is none of them (`rickandmorty.charactrs`) is a typo, not a host.
    /// A URL pattern of an app's URLs is one too (`http://localhost:3000/api/users`, `https://*.example.com/v1/*`): an
    /// http(s) scheme, a host, and `*` anywhere.
    public func acceptsBreakpoints(on endpoint: String) -> Bool {
        if Breakpoints.isURLPattern(endpoint) {
            // A control character (an escape pasted from a terminal) is in no URL: such a pattern would never match.
            guard endpoint.count <= 2048, !endpoint.contains(where: { $0.isWhitespace }),
                  !endpoint.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return false }
            let authority = endpoint.drop { $0 != "/" }.dropFirst(2).prefix { $0 != "/" && $0 != "?" }
            return !authority.isEmpty && URLPattern.problem(Breakpoints.key(endpoint)) == nil
        }
        let known = endpoints.map(\.name)
        if known.contains(endpoint) { return true }
        let first = endpoint.split(separator: ".").first.map(String.init) ?? ""
        if known.contains(where: { $0 == first || $0.hasPrefix(first + ".") }) { return false }
        return ListenerPolicy.hostName(ofAuthority: endpoint) != nil && endpoint == endpoint.lowercased()
    }

    /// Why `endpoint`, written as a URL pattern, can take no breakpoint (its port, its host): nil when it is no URL pattern
    /// or has no problem of a pattern's own, for the refusal to say what to fix rather than that no endpoint has the name.
    public func breakpointPatternProblem(on endpoint: String) -> URLPatternProblem? {
        guard Breakpoints.isURLPattern(endpoint) else { return nil }
        return URLPattern.problem(Breakpoints.key(endpoint))
    }

    /// What a breakpoint for `record`'s requests is set on: its catalog endpoint; for an app's exchange through `kiosk
    /// proxy`, its URL without the query (that address's requests, whatever their query: its host would pause every one
    /// the app sends there); nil when it can have none.
    public func breakpointKey(for record: RequestRecord) -> String? {
        if endpoints.contains(where: { $0.name == record.endpoint }) { return record.endpoint }
        var components = URLComponents(string: record.url)
        components?.query = nil
        components?.fragment = nil
        guard let address = components?.string, !address.contains("*"), acceptsBreakpoints(on: address) else {
            return acceptsBreakpoints(on: record.endpoint) ? record.endpoint : nil
        }
        return address
    }

    /// The endpoints of `sources`, then the image fetches.
    package static func endpoints(of sources: [SourceID: any CatalogSource]) -> [EndpointDescription] {
        let configured = SourceID.allCases.compactMap { sources[$0] }
        let hosts = configured.flatMap(\.origins).map(\.description) + configured.flatMap(\.imageHosts)
        return configured.flatMap(\.endpoints) + [
            EndpointDescription(name: "image", source: nil, host: Set(hosts).sorted().joined(separator: ", "),
                                template: "{the picture's URL}", contentType: "image/png, image/jpeg, image/gif, image/webp",
                                responseModel: ResponseModel("", yields: .rasterImage),
                                cachePolicy: .pictures(diskMegabytes: 200),
                                headers: ["Accept: image/*"]),
        ]
    }
}

/// One update of a live console.
public enum LiveUpdate: Sendable, Hashable {
    /// New exchanges matching the console's filter, oldest first (empty when none matched: the event's
    /// id still moves the console's place on), and the ids of all that were logged (the log's count moves by them).
    case exchanges(DebugEvents.EventID, [RequestRecord], logged: ClosedRange<Int64>)
    /// The log was emptied.
    case cleared(DebugEvents.EventID)
    /// This many exchanges are paused at breakpoints now.
    case paused(DebugEvents.EventID, count: Int)
    /// Recording was paused or resumed.
    case recording(DebugEvents.EventID, on: Bool)
    /// Changes were missed (or the log could not be read): reload the list, then follow the updates.
    case reset
}

/// A live console's updates, read lazily: each event's rows are read from the log when the console
/// asks for the next update, in the console's own task.
public struct LiveUpdates: AsyncSequence, Sendable {
    public typealias Element = LiveUpdate
    let deliveries: AsyncStream<DebugEvents.Delivery>
    let read: @Sendable (ClosedRange<Int64>) throws -> [RequestRecord]

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<DebugEvents.Delivery>.AsyncIterator
        let read: @Sendable (ClosedRange<Int64>) throws -> [RequestRecord]

        public mutating func next() async -> LiveUpdate? {
            guard let delivery = await base.next() else { return nil }
            guard case .event(let event) = delivery else { return .reset }
            switch event.change {
            case .stored(let ids):
                guard let records = try? read(ids) else { return .reset }
                return .exchanges(event.id, records, logged: ids)
            case .cleared: return .cleared(event.id)
            case .paused(let count): return .paused(event.id, count: count)
            case .recording(let on): return .recording(event.id, on: on)
            }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: deliveries.makeAsyncIterator(), read: read) }
}
