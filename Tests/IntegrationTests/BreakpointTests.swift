import Foundation
import KioskApp
import KioskDebugger
import KioskNetwork
import KioskCore
import KioskStore
import KioskTestSupport
import Synchronization
import Testing

/// An upstream that answers every request with the same JSON and remembers what it was sent.
private func echoUpstream() -> ScriptedTransport { ScriptedTransport(always: .json(#"{"name":"Rick"}"#)) }

/// Waits until `count` exchanges are paused.
private func waitForPauses(_ breakpoints: Breakpoints, _ count: Int) async throws {
    for _ in 0..<2000 where breakpoints.paused.count < count { try await Task.sleep(for: .milliseconds(2)) }
    try #require(breakpoints.paused.count == count)
}

@Suite("Breakpoints")
struct BreakpointTests {
    static let secret = "marvel-private-key-123456"
    let redactor = Redactor.standard.hiding([BreakpointTests.secret])
    let url = URL(string: "https://gateway.marvel.com/v1/public/characters?limit=20&apikey=\(BreakpointTests.secret)&ts=1&hash=abc")!

    @Test("A response breakpoint pauses with the response redacted; an edit continues, marked edited and logged")
    func responseEdit() async throws {
        // Given a response breakpoint on an endpoint
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "marvel.characters")
        let logged = Mutex<[RequestRecord]>([])
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor,
                                            record: { record in logged.withLock { $0.append(record) } })
        // When a request is made
        let request = HTTPRequest(url: url, headers: ["Authorization": "Bearer \(Self.secret)"], source: .marvel, endpoint: "marvel.characters")
        let pending = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        // Then it is paused at the response, with no secret in sight
        let paused = try #require(breakpoints.paused.first)
        #expect(paused.phase == .response && paused.responseText == #"{"name":"Rick"}"# && paused.status == 200)
        #expect(!paused.url.contains(Self.secret) && paused.requestHeaders.first?.value == "<redacted>")
        // And an edit continues it with the edited body and status, marked edited, and an edited record is logged
        #expect(breakpoints.decide(paused.id, .continueWithResponse(status: 201, body: Data(#"{"name":"Edited"}"#.utf8))))
        let response = try await pending.value
        #expect(response.isEdited && response.status == 201 && String(decoding: response.body, as: UTF8.self) == #"{"name":"Edited"}"#)
        #expect(logged.withLock { $0.map(\.decision) } == [.edited])
        // And its Cache-Status says edited, with the upstream's status as fwd-status, as a rule's edit says
        #expect(response.cacheStatus?.headerValue == "Kiosk;fwd=miss;fwd-status=200;detail=edited", "\(response.cacheStatus?.headerValue ?? "-")")
        #expect(logged.withLock { $0.map(\.cacheStatus.headerValue) } == ["Kiosk;fwd=miss;fwd-status=200;detail=edited"])
        #expect(breakpoints.paused.isEmpty)
        // And a second decision for the same pause is refused
        #expect(!breakpoints.decide(paused.id, .abort))
    }

    @Test("An answer edited at a breakpoint that echoes the request's own token is logged with the token hidden, as the capture logs the answer")
    func editedEchoLoggedHidden() async throws {
        // Given a response breakpoint, and an upstream that echoes the app's token
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "app.test")
        let token = "Bearer BPTOKEN-1-abcdef"
        let logged = Mutex<[RequestRecord]>([])
        let transport = BreakpointTransport(base: ScriptedTransport(always: .json(#"{"auth_seen":"\#(token)","name":"a"}"#)),
                                            breakpoints: breakpoints, redactor: redactor,
                                            record: { record in logged.withLock { $0.append(record) } })
        let pending = Task { try await transport.send(HTTPRequest(url: URL(string: "http://app.test/items")!,
                                                                  headers: ["Authorization": token], endpoint: "app.test")) }
        try await waitForPauses(breakpoints, 1)
        let paused = try #require(breakpoints.paused.first)
        // When its name alone is edited, the echoed token left as the upstream sent it
        let body = #"{"auth_seen":"\#(token)","name":"edited"}"#
        #expect(breakpoints.decide(paused.id, .continueWithResponse(status: 200, body: Data(body.utf8))))
        // Then the app gets the token, and the log's record of the edit does not hold it
        #expect(String(decoding: try await pending.value.body, as: UTF8.self) == body)
        let record = try #require(logged.withLock { $0.first })
        let kept = String(decoding: record.responseBody?.data ?? Data(), as: UTF8.self)
        #expect(!kept.contains("BPTOKEN") && kept.contains("edited"), "\(kept)")
    }

    @Test("A paused JSON answer's secret fields are shown hidden, as the log shows them, and an edit leaving them as shown sends them as they came")
    func pausedAnswerSecretFields() async throws {
        // Given a response breakpoint, and an upstream answering a login's token
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "app.test")
        let transport = BreakpointTransport(base: ScriptedTransport(always: .json(#"{"token":"BODYTOKEN-xyz","name":"a"}"#)),
                                            breakpoints: breakpoints, redactor: redactor)
        let pending = Task { try await transport.send(HTTPRequest(url: URL(string: "http://app.test/login")!, endpoint: "app.test")) }
        try await waitForPauses(breakpoints, 1)
        // When it is paused
        let paused = try #require(breakpoints.paused.first)
        // Then the token is shown hidden
        let shown = try #require(paused.responseText)
        #expect(!shown.contains("BODYTOKEN") && shown.contains(Redactor.placeholder), "\(shown)")
        // And an edit of the name alone goes with the token as it came
        let edited = shown.replacingOccurrences(of: #""name":"a""#, with: #""name":"b""#)
        let body = try #require(breakpoints.restoringHiddenSecrets(inAnswer: edited, shown: shown, ofPaused: paused.id))
        #expect(String(decoding: body, as: UTF8.self).contains("BODYTOKEN-xyz"))
        #expect(breakpoints.decide(paused.id, .continueWithResponse(status: 200, body: body)))
        #expect(String(decoding: try await pending.value.body, as: UTF8.self).contains(#""name":"b""#))
    }

    @Test("A compressed answer (gzip, deflate) is paused as its decoded content: an edit goes uncompressed, one sent unchanged as it came",
          arguments: ["gzip", "deflate"])
    func compressedAnswerEdited(coding: String) async throws {
        // Given a response breakpoint, and an upstream answering compressed JSON holding the app's token, as a browser gets it
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "app.test")
        let json = Data(#"{"items":[{"name":"Morty"}],"token":"BODYTOKEN-xyz"}"#.utf8)
        let compressed = try #require(ContentCoding.encoded(json, coding: coding))
        let upstream = ScriptedTransport(always: .reply { request in
            HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Content-Encoding": coding,
                                                "Content-Length": String(compressed.count)], body: compressed, url: request.url)
        })
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor)
        let request = HTTPRequest(url: URL(string: "http://app.test/items")!, headers: ["Accept-Encoding": "gzip, deflate, br"],
                                  endpoint: "app.test")

        // When an answer is paused
        let first = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        let paused = try #require(breakpoints.paused.first)
        // Then it is shown as its JSON, editable, its token hidden, its coding said; its coding and length are not offered
        let shown = try #require(paused.responseText)
        #expect(paused.responseIsText && paused.answersJSON && paused.decodedFrom == coding)
        #expect(shown.contains(#""name":"Morty""#) && !shown.contains("BODYTOKEN"), "\(shown)")
        #expect(!paused.responseHeaders.contains { ["content-encoding", "content-length"].contains($0.name.lowercased()) })
        #expect(paused.responseSize == compressed.count)
        // When the name is edited, the headers as shown
        let edited = shown.replacingOccurrences(of: "Morty", with: "Edited Morty")
        let body = try #require(breakpoints.restoringHiddenSecrets(inAnswer: edited, shown: shown, ofPaused: paused.id))
        #expect(breakpoints.decide(paused.id, .continueWithResponse(status: 200, body: body,
                                                                    headers: paused.responseHeaders.map { ($0.name, $0.value) })))
        // Then the app gets the edit uncompressed, its token as it came, no coding named
        let answer = try await first.value
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"items":[{"name":"Edited Morty"}],"token":"BODYTOKEN-xyz"}"#)
        #expect(answer.headers["Content-Encoding"] == nil)

        // When an edit names no headers (the answer's own)
        let second = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        #expect(breakpoints.decide(try #require(breakpoints.paused.first).id, .continueWithResponse(status: 200, body: Data("[]".utf8))))
        // Then it goes uncompressed too: the answer's coding named the bytes it came in
        let plain = try await second.value
        #expect(plain.body == Data("[]".utf8) && plain.headers["Content-Encoding"] == nil)

        // When one is sent unchanged
        let third = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        #expect(breakpoints.decide(try #require(breakpoints.paused.first).id, .continueUnchanged))
        // Then it goes as it came, compressed
        let unchanged = try await third.value
        #expect(unchanged.body == compressed && unchanged.headers["Content-Encoding"] == coding)
    }

    @Test("A browser's CORS preflight goes on past a breakpoint on its URL; the request after it pauses")
    func preflightNotPaused() async throws {
        // Given request and response breakpoints on an app's host
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause, response: .pause), for: "app.test")
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor)
        let url = URL(string: "http://app.test/items")!
        // When the browser's preflight is sent
        let preflight = try await transport.send(HTTPRequest(method: "OPTIONS", url: url, headers: [
            "Origin": "https://page.test", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "authorization",
        ], endpoint: "app.test"))
        // Then it was answered without a pause
        #expect(preflight.status == 200 && breakpoints.paused.isEmpty)
        // And an OPTIONS of the app's own (no preflight) pauses, as the GET after it does
        let own = Task { try await transport.send(HTTPRequest(method: "OPTIONS", url: url, endpoint: "app.test")) }
        try await waitForPauses(breakpoints, 1)
        breakpoints.decide(try #require(breakpoints.paused.first).id, .abort)
        _ = await own.result
    }

    @Test("Abort fails the request; a request edit changes the query and headers and keeps secret values")
    func abortAndRequestEdit() async throws {
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, now: clock.dateSource, redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "marvel.characters")
        let upstream = echoUpstream()
        let logged = Mutex<[RequestRecord]>([])
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor,
                                            record: { record in logged.withLock { $0.append(record) } })
        let request = HTTPRequest(url: url, source: .marvel, endpoint: "marvel.characters")
        // When the first request is aborted after a minute's pause
        let aborted = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        await clock.advance(by: .seconds(60))
        breakpoints.decide(try #require(breakpoints.paused.first).id, .abort)
        // Then it fails and nothing was sent
        await #expect(throws: KioskError.self) { try await aborted.value }
        #expect(upstream.requests.isEmpty)
        // And the log has what the app got: the abort, how long it waited, and at which breakpoint, without the secret
        let record = try #require(logged.withLock { $0.first })
        #expect(record.error?.contains("aborted at a breakpoint") == true && record.status == nil)
        #expect(record.timings.total >= 60 && !record.url.contains(Self.secret))
        #expect(record.touchedBy.first?.detail.contains("aborted at the request breakpoint") == true)
        // When the second is continued with limit 5 and a header, the redacted key shown unchanged
        let edited = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        let paused = try #require(breakpoints.paused.first)
        #expect(paused.url.contains("apikey=<redacted>"))
        breakpoints.decide(paused.id, .continueWithRequest(
            query: [("limit", "5"), ("apikey", "<redacted>"), ("ts", "1"), ("hash", "abc")], headers: [("X-Debug", "yes")]))
        _ = try await edited.value
        // Then the upstream got the edit with the real key
        let sent = try #require(upstream.requests.last)
        #expect(sent.url.query == "limit=5&apikey=\(Self.secret)&ts=1&hash=abc")
        #expect(sent.headers["X-Debug"] == "yes")
    }

    @Test("A request held at its breakpoint, then sent edited or as it was, is logged with the app's wait: from when it asked, the pause queued")
    func heldRequestLoggedWithItsWait() async throws {
        // Given a request breakpoint, with the capture below it as in the pipeline
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, now: clock.dateSource, redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "marvel.characters")
        let logged = Mutex<[RequestRecord]>([])
        let capture = CapturingTransport(base: echoUpstream(), redactor: redactor, now: clock.dateSource) { record in
            logged.withLock { $0.append(record.make()) }
        }
        let transport = BreakpointTransport(base: capture, breakpoints: breakpoints, redactor: redactor)
        let request = HTTPRequest(url: url, source: .marvel, endpoint: "marvel.characters")
        for decision in [PauseDecision.continueWithRequest(query: [("limit", "5")], headers: []), .continueUnchanged] {
            // When the app's request is held a minute, then sent on
            let asked = clock.dateSource()
            let sent = Task { try await transport.send(request) }
            try await waitForPauses(breakpoints, 1)
            await clock.advance(by: .seconds(60))
            _ = breakpoints.decide(try #require(breakpoints.paused.first).id, decision)
            _ = try await sent.value
            // Then its record starts when the app asked, and takes the minute it waited, as queueing
            let record = try #require(logged.withLock { $0.last })
            #expect(abs(record.startedAt.timeIntervalSince(asked)) < 1, "\(decision): \(record.startedAt) vs \(asked)")
            #expect(record.timings.total >= 60 && (record.timings.queued ?? 0) >= 60, "\(decision): \(record.timings)")
        }
        #expect(logged.withLock { $0.count } == 2)
    }

    @Test("The answer to a request changed at a breakpoint is marked edited (never stored under the request asked); one sent as it was is not")
    func changedRequestsAnswerIsEdited() async throws {
        // Given a breakpoint on Rick and Morty's list
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "rickandmorty.characters")
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor)
        let request = HTTPRequest(url: URL(string: "https://rickandmortyapi.com/api/character?page=1")!, source: .rickandmorty,
                                  endpoint: "rickandmorty.characters")
        // When one request is sent on to another page, and one is sent on as it was (its fields as shown)
        let changed = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        breakpoints.decide(try #require(breakpoints.paused.first).id, .continueWithRequest(query: [("page", "7")], headers: []))
        let same = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        breakpoints.decide(try #require(breakpoints.paused.first).id, .continueWithRequest(query: [("page", "1")], headers: []))
        // Then the first's answer is an edit, which the catalog shows and never stores; the second's is the upstream's
        #expect(try await changed.value.isEdited)
        #expect(try await !same.value.isEdited)
    }

    @Test("A paused request's body is shown redacted and can be replaced; the new body goes with no stale length")
    func requestBodyEdited() async throws {
        // Given a breakpoint on an app's login and its POST, with a password and its length
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "app.test")
        let upstream = echoUpstream()
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor)
        let body = #"{"user":"bob","password":"pw-123456"}"#
        let request = HTTPRequest(method: "POST", url: URL(string: "http://app.test/login")!,
                                  headers: ["Content-Type": "application/json", "Content-Length": String(body.utf8.count)],
                                  body: Data(body.utf8), endpoint: "app.test")
        let sending = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        // Then the pause shows the body, its secret field hidden
        let paused = try #require(breakpoints.paused.first)
        #expect(paused.requestText == #"{"user":"bob","password":"<redacted>"}"#)
        // When it is sent with another body
        let edited = #"{"user":"alice","password":"other-secret"}"#
        breakpoints.decide(paused.id, .continueWithRequest(query: [], headers: [("Content-Type", "application/json"),
                                                                                ("Content-Length", String(body.utf8.count))],
                                                           body: Data(edited.utf8)))
        _ = try await sending.value
        // Then the upstream gets the new body, and no length of the old one
        let sent = try #require(upstream.requests.last)
        #expect(sent.body == Data(edited.utf8))
        #expect(sent.headers["Content-Length"] == nil && sent.headers["Content-Type"] == "application/json")
    }

    @Test("A paused request's framing typed over its unchanged body is not sent: the body goes with the length the app gave it")
    func typedFramingIgnored() async throws {
        // Given a breakpoint on an app's POST of 13 bytes
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "app.test")
        let upstream = echoUpstream()
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor)
        let body = #"{"note":"hi"}"#
        let request = HTTPRequest(method: "POST", url: URL(string: "http://app.test/notes")!,
                                  headers: ["Content-Type": "application/json", "Content-Length": String(body.utf8.count)],
                                  body: Data(body.utf8), endpoint: "app.test")
        let sending = Task { try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        // When it is sent with its body untouched, a length of 50 and a chunked coding typed in its fields
        breakpoints.decide(try #require(breakpoints.paused.first).id, .continueWithRequest(
            query: [], headers: [("Content-Type", "application/json"), ("Content-Length", "50"), ("Transfer-Encoding", "chunked")]))
        _ = try await sending.value
        // Then the upstream gets the body with the app's own length, and no coding the body does not have
        let sent = try #require(upstream.requests.last)
        #expect(sent.body == Data(body.utf8))
        #expect(sent.headers.values(for: "Content-Length") == [String(body.utf8.count)], "\(sent.headers)")
        #expect(sent.headers["Transfer-Encoding"] == nil)
    }

    @Test("A paused answer's edited fields reach the app, a hidden cookie left as shown being the real one; a paused request's method and path are edited")
    func fieldsAndRequestLineEdited() async throws {
        // Given breakpoints on an app's requests and answers, whose upstream sets two cookies
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause, response: .pause), for: "app.test")
        let upstream = ScriptedTransport(always: .respond(200, headers: ["Content-Type": "application/json", "Set-Cookie": "a=first-secret",
                                                                         "Set-Cookie": "b=second-secret", "Transfer-Encoding": "chunked"],
                                                          body: #"{"ok":true}"#))
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor)
        let request = HTTPRequest(url: URL(string: "http://app.test/v1/items?page=2")!, headers: ["Cookie": "sid=session-secret"],
                                  endpoint: "app.test")
        let sending = Task { try await transport.send(request) }
        // When the request is sent as DELETE to another path, its hidden cookie left as shown
        try await waitForPauses(breakpoints, 1)
        let atRequest = try #require(breakpoints.paused.first)
        #expect(atRequest.path == "/v1/items" && atRequest.requestHeaders.first?.value == Redactor.placeholder)
        breakpoints.decide(atRequest.id, .continueWithRequest(query: [("page", "2")], headers: [("Cookie", Redactor.placeholder)],
                                                              method: "DELETE", path: "/v2/items/%C3%A9"))
        // Then the upstream gets that method and path, and the real cookie
        try await waitForPauses(breakpoints, 1)
        let sent = try #require(upstream.requests.last)
        #expect(sent.method == "DELETE" && sent.url.absoluteString == "http://app.test/v2/items/%C3%A9?page=2")
        #expect(sent.headers["Cookie"] == "sid=session-secret")
        // When its answer is sent on with the second cookie left hidden as shown, the first replaced, and a field added
        let atResponse = try #require(breakpoints.paused.first)
        #expect(atResponse.responseHeaders.filter { $0.name == "Set-Cookie" }.map(\.value) == [Redactor.placeholder, Redactor.placeholder])
        breakpoints.decide(atResponse.id, .continueWithResponse(status: 200, body: Data(#"{"ok":1}"#.utf8), headers: [
            ("Content-Type", "application/json"), ("Set-Cookie", "a=typed"), ("Set-Cookie", Redactor.placeholder), ("X-Edited", "yes"),
        ]))
        let answer = try await sending.value
        // Then the app gets the fields as edited, the hidden one its real value, and no framing of the old body
        #expect(answer.headers.values(for: "Set-Cookie") == ["a=typed", "b=second-secret"])
        #expect(answer.headers["X-Edited"] == "yes" && answer.headers["Transfer-Encoding"] == nil && answer.isEdited)
    }

    @Test("A paused request's edit to a path that is no URL path fails it with why, and nothing is sent")
    func badPathRefusedByTransport() async throws {
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "app.test")
        let upstream = echoUpstream()
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor)
        let sending = Task { try await transport.send(HTTPRequest(url: URL(string: "http://app.test/a")!, endpoint: "app.test")) }
        try await waitForPauses(breakpoints, 1)
        breakpoints.decide(try #require(breakpoints.paused.first).id, .continueWithRequest(query: [], headers: [], path: "/a b"))
        await #expect(throws: KioskError.invalidRequest("The edited path is not a URL path (it starts with / and escapes other characters as %XX).")) {
            try await sending.value
        }
        #expect(upstream.requests.isEmpty)
    }

    @Test("When the process stops, every pause ends unchanged at once, and nothing pauses after")
    func releasedOnStop() async throws {
        // Given a request paused at its request and another at its response
        let breakpoints = Breakpoints(fileURL: nil, clock: ManualClock(), redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "marvel.characters")
        try breakpoints.set(BreakpointSetting(response: .pause), for: "marvel.comics")
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor)
        let asking = Task { try await transport.send(HTTPRequest(url: url, source: .marvel, endpoint: "marvel.characters")) }
        let answered = Task { try await transport.send(HTTPRequest(url: url, source: .marvel, endpoint: "marvel.comics")) }
        try await waitForPauses(breakpoints, 2)
        // When every pause is released, as a stopping proxy does
        breakpoints.releaseAll()
        // Then both apps get their answers as they were, without waiting for a timeout that never comes (a manual clock)
        for pending in [asking, answered] {
            let response = try await pending.value
            #expect(!response.isEdited && String(decoding: response.body, as: UTF8.self) == #"{"name":"Rick"}"#)
        }
        // And a request made now is not paused
        #expect(try await transport.send(HTTPRequest(url: url, source: .marvel, endpoint: "marvel.characters")).status == 200)
        #expect(breakpoints.paused.isEmpty)
    }

    @Test("A pause nobody answers continues unchanged when its timeout passes")
    func timeout() async throws {
        // Given a 5-minute timeout on a manual clock
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, timeout: .seconds(300), clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "marvel.characters")
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor)
        let pending = Task { try await transport.send(HTTPRequest(url: url, endpoint: "marvel.characters")) }
        try await waitForPauses(breakpoints, 1)
        // When 4 minutes pass it is still paused; at 5 it goes on unchanged
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(240))
        try await Task.sleep(for: .milliseconds(20))
        #expect(breakpoints.paused.count == 1)
        await clock.advance(by: .seconds(60))
        let response = try await pending.value
        #expect(!response.isEdited && String(decoding: response.body, as: UTF8.self) == #"{"name":"Rick"}"#)
        #expect(breakpoints.paused.isEmpty)
    }

    @Test("A paused request whose app has gone is dropped, not sent, when its timeout passes; its list and its record say so, not an edit")
    func timeoutWithAppGone() async throws {
        // Given a request breakpoint with a 5-minute timeout on a manual clock, and a request paused at it
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, timeout: .seconds(300), clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(request: .pause), for: "marvel.characters")
        let upstream = echoUpstream()
        let logged = Mutex<[RequestRecord]>([])
        let transport = BreakpointTransport(base: upstream, breakpoints: breakpoints, redactor: redactor,
                                            record: { record in logged.withLock { $0.append(record) } })
        var request = HTTPRequest(method: "POST", url: url, endpoint: "marvel.characters")
        let side = AppSide()
        request.appSide = side
        let pending = Task { [request] in try await transport.send(request) }
        try await waitForPauses(breakpoints, 1)
        // When its app gives up (a client's timeout) and nobody decides
        side.close()
        #expect(breakpoints.paused.first?.appClosed == true)
        await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(300))
        // Then it ends aborted, and the upstream never got it
        await #expect(throws: KioskError.self) { _ = try await pending.value }
        #expect(upstream.requests.isEmpty && breakpoints.paused.isEmpty)
        // And its record says the app had gone and it was dropped: no edit anybody made
        let record = try #require(logged.withLock { $0.first })
        #expect(record.decision == .network && record.error?.contains("the app closed its connection") == true, "\(record)")
        #expect(record.touchedBy.map(\.phrase) == [.breakpoint(.droppedAppGone)])
    }

    @Test("Ten requests paused at once are all listed and each ends on its own decision")
    func concurrentPauses() async throws {
        let clock = ManualClock()
        let breakpoints = Breakpoints(fileURL: nil, clock: clock, redactor: redactor)
        try breakpoints.set(BreakpointSetting(response: .pause), for: "marvel.characters")
        let transport = BreakpointTransport(base: echoUpstream(), breakpoints: breakpoints, redactor: redactor)
        let tasks = (0..<10).map { _ in Task { try await transport.send(HTTPRequest(url: url, endpoint: "marvel.characters")) } }
        try await waitForPauses(breakpoints, 10)
        let ids = breakpoints.paused.map(\.id)
        #expect(Set(ids).count == 10)
        // Each is decided differently: even ones edited, odd ones aborted
        for (index, id) in ids.enumerated() {
            breakpoints.decide(id, index.isMultiple(of: 2) ? .continueWithResponse(status: 200, body: Data("{\"n\":\(index)}".utf8)) : .abort)
        }
        var edited = 0, failed = 0
        for task in tasks {
            do { if try await task.value.isEdited { edited += 1 } } catch { failed += 1 }
        }
        #expect(edited == 5 && failed == 5)
        #expect(breakpoints.paused.isEmpty)
    }

    @Test("Switches persist in their file and survive a restart")
    func persistence() throws {
        let folder = TemporaryDirectory.url("kiosk-bp")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("breakpoints.json")
        try Breakpoints(fileURL: file, redactor: .standard).set(BreakpointSetting(request: .pause, error: .pause), for: "dogs.list")
        let reopened = Breakpoints(fileURL: file, redactor: .standard)
        #expect(reopened.setting(for: "dogs.list") == BreakpointSetting(request: .pause, error: .pause))
        #expect(reopened.setting(for: "nyt.mostpopular").isOff)
        try reopened.set(BreakpointSetting(), for: "dogs.list")
        #expect(try Breakpoints(fileURL: file, redactor: .standard).settings().isEmpty)
    }

    @Test("An edited response reaches the view, is never stored, and an invalid edit is refused with its JSON path")
    func editedNotStored() async throws {
        try await withHarness { h in
            // Given a response breakpoint on Rick and Morty's list
            try h.kiosk.debugger.breakpoints.set(BreakpointSetting(response: .pause), for: "rickandmorty.characters")
            let pending = Task { try await h.catalog.page(PageRequest(source: .rickandmorty)) }
            try await waitForPauses(h.kiosk.debugger.breakpoints, 1)
            let paused = try #require(h.kiosk.debugger.breakpoints.paused.first)
            let original = try #require(paused.responseText)
            let url = URL(string: "http://127.0.0.1/api/character?page=1")!
            // When an edit that is not JSON, and one whose first character has no name, are checked
            #expect(throws: OrderedJSON.ParseError.self) {
                try h.kiosk.debugger.validateEdit(endpoint: paused.endpoint, url: url, status: 200, body: Data("{\"info\": ".utf8))
            }
            let nameless = original.replacingOccurrences(of: "\"name\":\"Rick Sanchez\"", with: "\"name\":null")
            do {
                try h.kiosk.debugger.validateEdit(endpoint: paused.endpoint, url: url, status: 200, body: Data(nameless.utf8))
                Issue.record("a nameless character was accepted")
            } catch KioskError.malformedResponse(let path, _) {
                #expect(path.contains("results[0]"))
            }
            // Then it is still paused; and a valid edit goes through to the view
            #expect(h.kiosk.debugger.breakpoints.paused.count == 1)
            let renamed = original.replacingOccurrences(of: "\"name\":\"Rick Sanchez\"", with: "\"name\":\"Edited Rick\"")
            try h.kiosk.debugger.validateEdit(endpoint: paused.endpoint, url: url, status: 200, body: Data(renamed.utf8))
            h.kiosk.debugger.breakpoints.decide(paused.id, .continueWithResponse(status: 200, body: Data(renamed.utf8)))
            let update = try await pending.value
            #expect(update.page.items.first?.title == "Edited Rick")
            // And nothing of it reached the store
            #expect(try h.database.snapshot(forKey: PageRequest(source: .rickandmorty).cacheKey) == nil)
            #expect(try h.database.item(source: .rickandmorty, itemID: "1") == nil)
        }
    }
}
