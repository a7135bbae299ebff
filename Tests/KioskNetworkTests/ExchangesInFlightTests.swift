import Foundation
import KioskCore
import Synchronization
import Testing
@testable import KioskNetwork

/// A transport whose answer waits until the test lets it go: the exchange stays in flight meanwhile.
private final class HeldTransport: HTTPTransport {
    private let gate: AsyncStream<Result<HTTPResponse, any Error>>
    private let release: AsyncStream<Result<HTTPResponse, any Error>>.Continuation

    init() {
        (gate, release) = AsyncStream.makeStream(of: Result<HTTPResponse, any Error>.self)
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        for await outcome in gate { return try outcome.get() }
        throw CancellationError()
    }

    func answer(_ outcome: Result<HTTPResponse, any Error>) { release.yield(outcome) }
}

/// A transport that notes on each request's recorder what the test says its wire read, as `UpstreamTransport` does.
private final class WireProgressTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let recorder = Mutex<ExchangeTouches?>(nil)

    init(base: any HTTPTransport) { self.base = base }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        recorder.withLock { $0 = request.recorder }
        return try await base.send(request)
    }

    /// Whether a request reached it.
    var hasRequest: Bool { recorder.withLock { $0 != nil } }

    /// The wire read the answer's head (when `status` is given) and `bytes` of its body.
    func read(status: Int? = nil, contentType: String? = nil, bytes: Int) {
        let recorder = recorder.withLock { $0 }
        if let status { recorder?.answerBegan(status: status, contentType: contentType) }
        recorder?.answerReceived(bytes)
    }
}

@Suite("Exchanges in flight")
struct ExchangesInFlightTests {
    static let key = "in-flight-secret-0123456789"
    let redactor = Redactor.standard.hiding([ExchangesInFlightTests.key])

    /// Waits until `inFlight` holds `count` exchanges (the send runs in a task of its own).
    private func waitFor(_ count: Int, in inFlight: ExchangesInFlight) async throws {
        for _ in 0..<500 where inFlight.count != count { try await Task.sleep(for: .milliseconds(5)) }
        #expect(inFlight.count == count)
    }

    @Test("An exchange waiting for its answer is listed, its secrets hidden, until the answer comes")
    func listedUntilAnswered() async throws {
        // Given a capture listing its exchanges in flight, over an upstream that holds its answer
        let upstream = HeldTransport()
        let inFlight = ExchangesInFlight(redactor: redactor)
        let capture = CapturingTransport(base: upstream, redactor: redactor, inFlight: inFlight) { _ in }
        let url = URL(string: "https://api.example/v1/items?api-key=\(Self.key)&token=app-token-42")!

        // When a request is sent and its answer has not come
        let sending = Task { try await capture.send(HTTPRequest(method: "POST", url: url, endpoint: "api.example")) }
        try await waitFor(1, in: inFlight)

        // Then it is listed: its method and URL, the configured key and the app's own token hidden, no status yet
        let listed = try #require(inFlight.snapshot().first)
        #expect(listed.method == "POST" && listed.endpoint == "api.example")
        #expect(listed.url == "https://api.example/v1/items?api-key=<redacted>&token=<redacted>")
        #expect(listed.status == nil && listed.received == nil)
        // And one not yet a second old is left out when only older ones are asked for
        #expect(inFlight.snapshot(olderThan: .seconds(60)).isEmpty)

        // When the answer comes
        upstream.answer(.success(HTTPResponse(status: 200, body: Data("{}".utf8), url: url)))
        _ = try await sending.value
        // Then it is no longer in flight
        #expect(inFlight.count == 0)
    }

    @Test("An app that closes its connection while its exchange is in flight is said to have gone; the exchange stays listed until it ends")
    func appGone() async throws {
        let upstream = HeldTransport()
        let inFlight = ExchangesInFlight(redactor: redactor)
        let capture = CapturingTransport(base: upstream, redactor: redactor, inFlight: inFlight) { _ in }
        // Given an app's request in flight
        let app = AppSide()
        var request = HTTPRequest(url: URL(string: "http://app.test/slow")!, endpoint: "app.test", purpose: .proxied)
        request.appSide = app
        let sending = Task { [request] in try await capture.send(request) }
        try await waitFor(1, in: inFlight)
        #expect(inFlight.snapshot().first?.appClosed == false)
        // When the app closes its connection
        app.close()
        // Then the exchange is still listed, saying so
        #expect(inFlight.snapshot().first?.appClosed == true)
        upstream.answer(.success(HTTPResponse(status: 200, url: request.url)))
        _ = try await sending.value
    }

    @Test("A failed exchange leaves the list as it fails")
    func leavesOnFailure() async throws {
        let upstream = HeldTransport()
        let inFlight = ExchangesInFlight(redactor: redactor)
        let capture = CapturingTransport(base: upstream, redactor: redactor, inFlight: inFlight) { _ in }
        // Given a request in flight
        let sending = Task { try await capture.send(HTTPRequest(url: URL(string: "http://app.test/slow")!, endpoint: "app.test")) }
        try await waitFor(1, in: inFlight)
        // When its upstream fails
        upstream.answer(.failure(URLError(.timedOut)))
        _ = await sending.result
        // Then it is gone from the list
        #expect(inFlight.count == 0)
    }

    @Test("A streamed answer stays listed with its status and the bytes passed so far until its body ends")
    func streamedAnswer() async throws {
        // Given an upstream answering with a body that comes part by part
        let upstream = HeldTransport()
        let inFlight = ExchangesInFlight(redactor: redactor)
        let capture = CapturingTransport(base: upstream, redactor: redactor, inFlight: inFlight) { _ in }
        let parts = Mutex<[Data]>([Data("data: 1\n\n".utf8), Data("data: 22\n\n".utf8)])
        let stream = BodyStream(pull: { parts.withLock { $0.isEmpty ? nil : $0.removeFirst() } }, stop: {})
        var answer = HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Data(),
                                  url: URL(string: "http://app.test/events")!)
        answer.stream = stream
        let sending = Task { try await capture.send(HTTPRequest(url: URL(string: "http://app.test/events")!, endpoint: "app.test")) }
        try await waitFor(1, in: inFlight)
        upstream.answer(.success(answer))
        let response = try await sending.value
        let body = try #require(response.stream)

        // When its head has come and one part was read
        _ = try await body.next()
        // Then it is still listed, with its status and that part's bytes
        let listed = try #require(inFlight.snapshot().first)
        #expect(listed.status == 200 && listed.received == 9)
        // And a filter of its status lists it, one of another status or its negation does not
        #expect(try RequestFilter(parsing: "status:200").mayMatch(listed) && RequestFilter(parsing: "status:2xx").mayMatch(listed))
        #expect(try !RequestFilter(parsing: "status:5xx").mayMatch(listed) && !RequestFilter(parsing: "-status:200").mayMatch(listed))

        // When the rest is read to the end
        while try await body.next() != nil {}
        // Then it has left the list
        #expect(inFlight.count == 0)
    }

    @Test("An exchange carries to its record the recording generation it began under, and is listed only while that generation lasts")
    func generationCarried() async throws {
        // Given a capture whose log's recording generation is 7, over an upstream that holds its answer
        let generation = Mutex<UInt64>(7)
        let records = Mutex<[DeferredRecord]>([])
        let upstream = HeldTransport()
        let inFlight = ExchangesInFlight(redactor: redactor, generation: { generation.withLock { $0 } })
        let capture = CapturingTransport(base: upstream, redactor: redactor, inFlight: inFlight) { record in records.withLock { $0.append(record) } }
        let url = URL(string: "http://app.test/slow")!
        let sending = Task { try await capture.send(HTTPRequest(url: url, endpoint: "app.test")) }
        try await waitFor(1, in: inFlight)
        #expect(inFlight.snapshot().count == 1)
        // When recording is paused while it is in flight (the generation changes)
        generation.withLock { $0 = 8 }
        // Then it is no longer listed (its record would not be logged), though still in flight
        #expect(inFlight.snapshot().isEmpty && inFlight.count == 1)
        // And its record, when it ends, carries the generation it began under, for the log to drop it
        upstream.answer(.success(HTTPResponse(status: 200, url: url)))
        _ = try await sending.value
        #expect(records.withLock { $0.map(\.generation) } == [7])
    }

    @Test("An answer held whole shows, while it comes, the status, type and bytes the wire read of it; the capture's word on a streamed one comes first")
    func heldAnswerProgress() async throws {
        // Given a wire that reads an answer's head and part of its body, and then waits for the rest
        let upstream = HeldTransport()
        let wire = WireProgressTransport(base: upstream)
        let inFlight = ExchangesInFlight(redactor: redactor)
        let capture = CapturingTransport(base: wire, redactor: redactor, inFlight: inFlight) { _ in }
        let url = URL(string: "http://app.test/download")!
        let sending = Task { try await capture.send(HTTPRequest(url: url, endpoint: "app.test")) }
        try await waitFor(1, in: inFlight)
        for _ in 0..<500 where !wire.hasRequest { try await Task.sleep(for: .milliseconds(5)) }
        // When nothing has come yet, it is pending
        #expect(inFlight.snapshot().first?.status == nil && inFlight.snapshot().first?.received == nil)
        // When the head and 4,096 bytes have come
        wire.read(status: 200, contentType: "application/zip", bytes: 4_096)
        // Then it is listed with them, still in flight
        let listed = try #require(inFlight.snapshot().first)
        #expect(listed.status == 200 && listed.contentType == "application/zip" && listed.received == 4_096)
        // And as more comes, the count grows
        wire.read(bytes: 1_000)
        #expect(inFlight.snapshot().first?.received == 5_096)
        upstream.answer(.success(HTTPResponse(status: 200, url: url)))
        _ = try await sending.value
        #expect(inFlight.count == 0)
    }

    @Test("At most the capacity is held: an exchange whose end never came does not hold memory for ever")
    func bounded() {
        let inFlight = ExchangesInFlight(redactor: redactor, capacity: 3)
        let ids = (0..<5).map { index in
            inFlight.begin(HTTPRequest(url: URL(string: "http://app.test/\(index)")!, endpoint: "app.test"), startedAt: Date(),
                           start: .now)
        }
        #expect(inFlight.count == 3)
        // The oldest went first
        #expect(Set(inFlight.snapshot().map(\.id)) == Set(ids.suffix(3).map(\.id)))
    }
}
