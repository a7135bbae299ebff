import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb
import ServiceLifecycle
import Synchronization

// `/debug/events`: the console's live feed as Server-Sent Events (the HTML standard's EventSource).
// A stream follows the debugger's numbered events (DebugEvents): new exchanges arrive as summary rows
// (the JSON of `/debug/api/requests`, plus the console's rendered table row, never a body) read through
// the console's own filter, so a filtered console receives only what it shows; a cleared log and the
// number of paused exchanges arrive too. A reconnecting browser sends `Last-Event-ID` and gets what it
// missed, or a `reset` telling it to reload its list (the gap is no longer kept, or the server was
// restarted). A page passes `since`, the event id its list was read at, on its first connection, so
// nothing between the page's render and the connection is missed.

extension DebugController {
    /// How often a comment line is sent on an idle stream, so that a closed tab is noticed and no proxy
    /// or browser closes a quiet connection.
    static let heartbeatInterval: Duration = .seconds(15)

    /// How often an open stream asks again whether its browser may still read it (its device still paired,
    /// its debugger session not expired); it ends once not.
    static let authorizationRecheckInterval: Duration = .seconds(5)

    /// How often an open stream looks at the exchanges in flight, and sends them when they changed.
    static let inFlightInterval: Duration = .seconds(1)

    /// How long a browser waits before reconnecting a dropped stream, in milliseconds (SSE's `retry:`).
    static let reconnectDelayMilliseconds = 1000

    /// The `/debug/events` response: an endless `text/event-stream` that ends when the client leaves, the
    /// server stops, or what let the browser in no longer holds (`stillAuthorized`, asked every `recheck`).
    func liveEvents(_ request: Request, words: ConsoleWords, stillAuthorized: @escaping @Sendable () -> Bool,
                    recheck: Duration = authorizationRecheckInterval) throws -> Response {
        let (filterQuery, since) = Self.splitSince(request.uri.query)
        let query = try FormInput.decode(DebugFilterQuery.self, from: filterQuery)
        if let error = query.syntaxError {
            throw WebError.badRequest(words.filterNotUnderstood(words.filterProblem(error.reason)) + "(\(error.characterOffsets.lowerBound + 1))")
        }
        let debugger = try withLog()
        let headerID = request.headers[HTTPFields.Element.Name("Last-Event-ID")!]
        // The browser's own place wins over the page's: it is later.
        let after = (headerID ?? since).flatMap { DebugEvents.EventID($0.trimmingCharacters(in: .whitespaces)) }
        let resumesUnknown = (headerID ?? since).map { !$0.isEmpty && after == nil } ?? false
        let updates = debugger.liveUpdates(matching: query.filter, after: after)
        let body = ResponseBody { writer in
            let (frames, feed) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(64))
            // The exchanges in flight, as a whole each time they change (begun, ended, their answer's head come, more of a
            // streamed body passed): a snapshot, not numbered — a reconnected stream sends the current one first. Looked at
            // every second, and as soon as exchanges are logged (one that ended leaves the list as its record comes).
            let inFlightSent = Mutex<[InFlightRowJSON]?>(nil)
            let sendInFlight = { @Sendable in
                let rows = debugger.pausedInFlight(matching: query.filter).map { InFlightRowJSON(paused: $0, words) }
                    + debugger.inFlight(matching: query.filter).map { InFlightRowJSON($0, words) }
                let changed = inFlightSent.withLock { sent in
                    defer { sent = rows }
                    return sent != rows
                }
                if changed { feed.yield(Self.inFlightFrame(rows)) }
            }
            let forward = Task {
                if resumesUnknown { feed.yield(Self.frame(LiveUpdate.reset, words)) }
                for await update in updates {
                    feed.yield(Self.frame(update, words))
                    switch update {
                    case .exchanges, .paused: sendInFlight()
                    default: break
                    }
                }
                feed.finish()
            }
            let heartbeat = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: Self.heartbeatInterval) } catch { return }
                    feed.yield(ByteBuffer(string: ": heartbeat\n\n"))
                }
            }
            // A revoked device or an expired session is not told anything more: the stream ends, and the
            // browser's reconnection is refused at the gate.
            let inFlight = Task {
                while !Task.isCancelled {
                    sendInFlight()
                    do { try await Task.sleep(for: Self.inFlightInterval) } catch { return }
                }
            }
            let authorization = Task {
                while !Task.isCancelled {
                    do { try await Task.sleep(for: recheck) } catch { return }
                    if !stillAuthorized() {
                        feed.finish()
                        return
                    }
                }
            }
            defer {
                forward.cancel()
                heartbeat.cancel()
                inFlight.cancel()
                authorization.cancel()
            }
            // A stream never ends on its own, and a stopping server waits for its requests: it ends
            // them when it starts shutting down (the browser reconnects to the next server).
            try await withGracefulShutdownHandler {
                try await writer.write(ByteBuffer(string: "retry: \(Self.reconnectDelayMilliseconds)\n: connected\n\n"))
                for await frame in frames { try await writer.write(frame) }
            } onGracefulShutdown: {
                feed.finish()
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: [
            .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
            // Buffering proxies (nginx) would hold the events back.
            HTTPFields.Element.Name("X-Accel-Buffering")!: "no",
        ], body: body)
    }

    /// The query string without `since` (the filter's form refuses unknown names), and `since`.
    static func splitSince(_ query: String?) -> (filter: String?, since: String?) {
        guard let query, !query.isEmpty else { return (query, nil) }
        var since: String?
        let kept = query.split(separator: "&", omittingEmptySubsequences: false).filter { pair in
            guard pair.hasPrefix("since=") else { return true }
            since = String(pair.dropFirst("since=".count)).removingPercentEncoding
            return false
        }
        return (kept.joined(separator: "&"), since)
    }

    /// One update as an SSE frame: `id`, `event` and one line of JSON `data` (rows in the console's language).
    static func frame(_ update: LiveUpdate, _ words: ConsoleWords) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let id: DebugEvents.EventID?
        let event: String
        let data: Data
        switch update {
        case .exchanges(let eventID, let records, let logged):
            id = eventID
            // Filtered out, the rows are none; the count of all logged still moves the page's "N requests logged" on.
            event = "exchanges"
            data = (try? encoder.encode(LiveExchangesJSON(rows: records.map { LiveRowJSON($0, words) },
                                                          logged: [logged.lowerBound, logged.upperBound]))) ?? Data("{}".utf8)
        case .cleared(let eventID):
            (id, event, data) = (eventID, "cleared", Data("{}".utf8))
        case .paused(let eventID, let count):
            (id, event, data) = (eventID, "paused", Data("{\"count\":\(count)}".utf8))
        case .recording(let eventID, let on):
            (id, event, data) = (eventID, "recording", Data("{\"on\":\(on)}".utf8))
        case .reset:
            (id, event, data) = (nil, "reset", Data("{}".utf8))
        }
        var text = id.map { "id: \($0)\n" } ?? ""
        text += "event: \(event)\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n"
        return ByteBuffer(string: text)
    }
}

extension DebugController {
    /// An `inflight` frame: the rows of the exchanges in flight the console's filter may select, the latest begun first.
    static func inFlightFrame(_ rows: [InFlightRowJSON]) -> ByteBuffer {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(["rows": rows])) ?? Data("{\"rows\":[]}".utf8)
        return ByteBuffer(string: "event: inflight\ndata: " + String(decoding: data, as: UTF8.self) + "\n\n")
    }
}

/// An exchange in flight on the live feed, or one paused at a breakpoint: its row's key (`data-inflight`: its number in
/// the process, or `p` and its pause's) and its row (`DebugPages.inFlightRow`, `pausedRow`).
struct InFlightRowJSON: Encodable, Equatable {
    let key: String
    let html: String
    /// What changes its row, besides the time (which the script counts on): compared, not sent.
    private let state: [Int?]

    init(_ exchange: ExchangesInFlight.Exchange, _ words: ConsoleWords) {
        key = String(exchange.id)
        html = DebugPages.inFlightRow(exchange, words).rendered
        state = [exchange.status, exchange.received, exchange.appClosed ? 1 : 0]
    }

    init(paused: PausedExchange, _ words: ConsoleWords) {
        key = "p\(paused.id)"
        html = DebugPages.pausedRow(paused, now: Date(), words).rendered
        state = [paused.status, paused.appClosed ? 1 : 0]
    }

    private enum CodingKeys: String, CodingKey { case key, html }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key && lhs.state == rhs.state }
}

/// `/debug/api/in-flight`: one exchange in flight.
struct InFlightJSON: Encodable {
    let id: UInt64
    let startedAt: Date
    let elapsedMs: Int
    let method: String
    let url: String
    let source: SourceID?
    let endpoint: String
    let status: Int?
    let receivedBytes: Int?
    let appClosed: Bool

    init(_ exchange: ExchangesInFlight.Exchange) {
        id = exchange.id
        startedAt = exchange.startedAt
        elapsedMs = Int(exchange.elapsed.seconds * 1000)
        method = exchange.method
        url = exchange.url
        source = exchange.source
        endpoint = exchange.endpoint
        status = exchange.status
        receivedBytes = exchange.received
        appClosed = exchange.appClosed
    }
}

/// An `exchanges` event's data: the rows of the console's filter, and the first and last ids of all that were logged.
struct LiveExchangesJSON: Encodable {
    let rows: [LiveRowJSON]
    let logged: [Int64]
}

/// A new exchange on the live feed: its summary (the list's JSON, without headers or bodies) and the
/// console's table row for it, rendered by the same code as the page's rows.
struct LiveRowJSON: Encodable {
    let request: RequestJSON
    let html: String

    init(_ record: RequestRecord, _ words: ConsoleWords) {
        request = RequestJSON(record, includingHeaders: false)
        html = DebugPages.row(record, words).rendered
    }
}
