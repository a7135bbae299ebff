import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDebugger
import KioskStore
import NIOCore
import Testing
@testable import KioskWeb

/// One Server-Sent Event as a browser's EventSource reads it (comments dropped; an id-only frame kept,
/// with no event and no data, so tests can see the place move on).
struct ServerSentEvent: Sendable, Equatable {
    var id: String?
    var event: String?
    var data: String?
}

/// Reads `/debug/events` over a real socket with AsyncHTTPClient, frame by frame.
final class EventStreamReader {
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private var buffer = ""
    let response: HTTPClientResponse

    private init(response: HTTPClientResponse) {
        self.response = response
        iterator = response.body.makeAsyncIterator()
    }

    static func open(_ client: HTTPClient, port: Int, path: String, lastEventID: String? = nil) async throws -> EventStreamReader {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let lastEventID { request.headers.add(name: "Last-Event-ID", value: lastEventID) }
        return EventStreamReader(response: try await client.execute(request, timeout: .seconds(10)))
    }

    /// The next frame with an id, an event or data; fails the test after `seconds`.
    func next(within seconds: Double = 10) async throws -> ServerSentEvent {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let range = buffer.range(of: "\n\n") {
                let frame = String(buffer[..<range.lowerBound])
                buffer.removeSubrange(..<range.upperBound)
                var event = ServerSentEvent()
                for line in frame.split(separator: "\n") where !line.hasPrefix(":") {
                    let (name, value) = line.firstIndex(of: ":").map {
                        (String(line[..<$0]), String(line[line.index(after: $0)...]).trimmingPrefix(" "))
                    } ?? (String(line), "")
                    switch name {
                    case "id": event.id = String(value)
                    case "event": event.event = String(value)
                    case "data": event.data = String(value)
                    default: break
                    }
                }
                if event != ServerSentEvent() { return event }
                continue
            }
            guard Date() < deadline else { throw Timeout() }
            guard let chunk = try await iterator.next() else { throw Ended() }
            buffer += String(buffer: chunk)
        }
    }

    /// The next frame of `kind` (skipping others, id-only frames included).
    func next(_ kind: String, within seconds: Double = 10) async throws -> ServerSentEvent {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let event = try await next(within: max(0.1, deadline.timeIntervalSinceNow))
            if event.event == kind { return event }
        }
    }

    struct Timeout: Error {}
    struct Ended: Error {}
}

/// A new exchanges event's rows, decoded.
struct LiveRows: Decodable {
    struct Row: Decodable {
        struct Request: Decodable {
            let id: Int64
            let endpoint: String
            let source: String?
        }
        let request: Request
        let html: String
    }
    let rows: [Row]
    /// The first and last ids of all that were logged, matching the filter or not.
    let logged: [Int64]

    init(_ event: ServerSentEvent) throws {
        self = try JSONDecoder().decode(LiveRows.self, from: Data((event.data ?? "").utf8))
    }
}

@Suite("Debugger live feed")
struct WebLiveFeedTests {
    @Test("a console following the feed receives a request made after it connected, as a summary row without bodies")
    func newExchange() async throws {
        try await withLiveWeb { _, client, http, port in
            // Given a console following /debug/events
            let feed = try await EventStreamReader.open(http, port: port, path: "/debug/events")
            #expect(feed.response.status == .ok)
            #expect(feed.response.headers.first(name: "Content-Type") == "text/event-stream; charset=utf-8")
            #expect(feed.response.headers.first(name: "Cache-Control") == "no-store")

            // When the dogs list is read (an upstream request is logged)
            #expect(try await client.get("/api/dogs").status == .ok)

            // Then the exchange arrives with an id, its summary and its table row, and no body
            let event = try await feed.next("exchanges")
            let rows = try LiveRows(event)
            #expect(event.id?.contains("-") == true)
            #expect(rows.rows.contains { $0.request.endpoint.hasPrefix("dogs") && $0.request.source == "dogs" })
            #expect(rows.rows.allSatisfy { $0.html.hasPrefix("<tr data-id=\"\($0.request.id)\"") })
            // And its row says the answer's type as the page's row does (the feed read records without headers: blank)
            #expect(rows.rows.contains { $0.html.contains("<td class=\"type\">json</td>") }, "\(rows.rows.map(\.html))")
            #expect(event.data?.contains("responseBody") == false)
            #expect(event.data?.contains("\"html\"") == true)
            // The stream is still open when the server stops: stopping must not wait for it.
        }
    }

    @Test("recording paused or resumed in one console is told to every open one")
    func recordingSwitched() async throws {
        try await withLiveWeb { harness, _, http, port in
            // Given a console following the feed
            let feed = try await EventStreamReader.open(http, port: port, path: "/debug/events")
            // When another pauses recording, then resumes it
            harness.kiosk.debugger.isRecording = false
            let paused = try await feed.next("recording")
            harness.kiosk.debugger.isRecording = true
            let resumed = try await feed.next("recording")
            // Then it is told each
            #expect(paused.data == #"{"on":false}"# && resumed.data == #"{"on":true}"#, "\(paused.data ?? "-") \(resumed.data ?? "-")")
        }
    }

    @Test("a filtered console receives only the rows its filter matches")
    func filtered() async throws {
        try await withLiveWeb { _, client, http, port in
            // Given a console following only Rick and Morty's requests
            let feed = try await EventStreamReader.open(http, port: port, path: "/debug/events?source=rickandmorty")

            // When the dogs list is read, then Rick and Morty's
            _ = try await client.get("/api/dogs")
            _ = try await client.get("/api/rickandmorty")

            // Then the rows it receives are Rick and Morty's, never a dog's — the dogs' event comes without rows, saying
            // only that it was logged (the page's count of all logged moves on)
            var events: [LiveRows] = []
            while events.allSatisfy({ $0.rows.isEmpty }) { events.append(try LiveRows(try await feed.next("exchanges"))) }
            #expect(events.flatMap(\.rows).allSatisfy { $0.request.source == "rickandmorty" })
            #expect(events.map { $0.logged[1] - $0.logged[0] + 1 }.reduce(0, +) >= 2, "\(events.map(\.logged))")
        }
    }

    @Test("a console reconnecting with its last event id gets what it missed; an id from another run gets a reset")
    func resume() async throws {
        try await withLiveWeb { _, client, http, port in
            // Given a console that saw the dogs request, then disconnected
            let first = try await EventStreamReader.open(http, port: port, path: "/debug/events?source=dogs")
            _ = try await client.get("/api/dogs")
            let seen = try #require(try await first.next("exchanges").id)

            // When Rick and Morty is read while it is away, and it reconnects with its last id, unfiltered
            _ = try await client.get("/api/rickandmorty")
            let resumed = try await EventStreamReader.open(http, port: port, path: "/debug/events", lastEventID: seen)

            // Then the missed request is replayed
            let missed = try LiveRows(try await resumed.next("exchanges"))
            #expect(missed.rows.contains { $0.request.source == "rickandmorty" })

            // And a console whose id is from an earlier run of the server is told to reload
            let stale = try await EventStreamReader.open(http, port: port, path: "/debug/events", lastEventID: "earlier-12")
            #expect(try await stale.next().event == "reset")
            // And so is one with text that is not an id at all
            let garbled = try await EventStreamReader.open(http, port: port, path: "/debug/events", lastEventID: "garbage")
            #expect(try await garbled.next().event == "reset")
        }
    }

    @Test("the page's since parameter replays what was stored between the page and the connection")
    func since() async throws {
        try await withLiveWeb { harness, client, http, port in
            // Given the console page read, naming the feed and the event it was read at
            _ = try await client.get("/api/nyt")
            let page = try await client.get("/debug")
            let events = try #require(page.body.firstMatch(of: /data-events="([^"]+)"/)?.1).replacingOccurrences(of: "&amp;", with: "&")
            #expect(events.hasPrefix("/debug/events?since="))

            // When a request is made before the page's script connects
            _ = try await client.get("/api/dogs")
            try harness.kiosk.debugger.flush() // stored (and announced) before the connection
            let feed = try await EventStreamReader.open(http, port: port, path: String(events))

            // Then the feed replays it (rows the page listed may come again: the page shows each once)
            var sources: [String?] = []
            while !sources.contains("dogs") { sources += try LiveRows(try await feed.next("exchanges")).rows.map(\.request.source) }
            #expect(sources.contains("dogs"))
        }
    }

    @Test("requests another process logs (kiosk sync beside kiosk serve) reach a live console, once each, and its clear too")
    func anotherProcessesRequests() async throws {
        try await withLiveWeb { harness, client, http, port in
            // Given a console following the feed, one exchange of this process's announced already
            let feed = try await EventStreamReader.open(http, port: port, path: "/debug/events")
            #expect(try await client.get("/api/dogs").status == .ok)
            let own = try LiveRows(try await feed.next("exchanges")).rows.map(\.request.id)
            // When another opening of the log's file (as another process's) stores a record
            let other = try RequestLog.open(at: harness.kiosk.configuration.requestLogURL.path)
            let id = try other.append(RequestRecord(startedAt: Date(), source: .rickandmorty, endpoint: "rickandmorty.characters",
                                                    method: "GET", url: "https://rickandmortyapi.test/api/character?page=9", status: 200,
                                                    timings: RequestTimings(total: 0.1), decision: .network))
            // Then the console is told of it, and of nothing it had already
            let rows = try LiveRows(try await feed.next("exchanges", within: 5)).rows.map(\.request.id)
            #expect(rows == [id] && !own.contains(id), "\(rows) after \(own)")
            // And when that process clears the log, the console is told
            try other.clear()
            #expect(try await feed.next("cleared", within: 5).data == "{}")
            try other.close()
        }
    }

    @Test("a cleared log, a request pausing at a breakpoint and its pause ending are pushed too")
    func clearedAndPaused() async throws {
        try await withLiveWeb { harness, client, http, port in
            // Given a console following the feed, and a breakpoint on the dogs list's request
            let feed = try await EventStreamReader.open(http, port: port, path: "/debug/events")
            let breakpoints = harness.kiosk.debugger.breakpoints
            breakpoints.isActive = true
            try breakpoints.set(BreakpointSetting(request: .pause), for: "dogs.list")

            // When the log is cleared
            try harness.kiosk.debugger.clear()
            // Then it is told
            #expect(try await feed.next("cleared").data == "{}")

            // When the dogs list is asked for, its request pauses, and the pause is decided
            let reading = Task { try await client.get("/api/dogs") }
            #expect(try await feed.next("paused").data == #"{"count":1}"#)
            let paused = try #require(breakpoints.paused.first)
            breakpoints.decide(paused.id, .continueUnchanged)

            // Then the end of the pause is pushed, and the request goes on
            #expect(try await feed.next("paused").data == #"{"count":0}"#)
            #expect(try await reading.value.status == .ok)
        }
    }

    @Test("the insights page and its JSON rank the endpoints read, count bytes per source and stale apart from fresh")
    func insights() async throws {
        try await withWeb { harness, client in
            // Given the dogs and Rick and Morty read from the upstream, then Rick and Morty again (fresh from the store)
            _ = try await client.get("/api/dogs")
            _ = try await client.get("/api/rickandmorty")
            _ = try await client.get("/api/rickandmorty")

            // When the insights are asked for, as a page and as JSON
            let page = try await client.get("/debug/insights")
            let json = try await client.get("/debug/api/insights")
            let insights = try JSONDecoder().decode(LogInsights.self, from: Data(json.bytes))

            // Then both upstream endpoints are ranked, the store answer counted fresh, nothing stale, bytes per source
            #expect(page.status == .ok)
            #expect(page.body.contains("<h1>Insights</h1>"))
            #expect(page.body.contains("dogs.<wbr>list") && page.body.contains("rickandmorty.<wbr>characters"))
            #expect(Set(insights.endpoints.map(\.endpoint)).isSuperset(of: ["dogs.list", "rickandmorty.characters"]))
            #expect(insights.decisions.fresh >= 1)
            #expect(insights.decisions.stale == 0)
            #expect(insights.decisions.network >= 2)
            #expect(insights.sources.first { $0.source == .dogs }.map { $0.responseBytes > 0 } == true)
            _ = harness
        }
    }

    @Test("the feed refuses a filter it cannot read, as the list does")
    func badFilter() async throws {
        try await withWeb { _, client in
            let response = try await client.get("/debug/events?status=6xx")
            #expect(response.status == .badRequest)
        }
    }
}
