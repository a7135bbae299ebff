import Foundation
import KioskApp
import KioskCore
import KioskDebugger
import KioskDemoUpstream
import KioskTestSupport
import Testing

/// A resend is the user's own exchange: the transport stack never joins it onto an identical request in flight
/// (nor one onto it), so it always gets a record of its own, linked to the request it sends again.
@Suite("Resends and coalescing", .serialized)
struct ResendCoalescingTests {
    /// Waits until the demo upstream has received `count` requests under `prefix` (bounded).
    static func waitForRequests(_ h: Harness, _ prefix: String, count: Int) async throws {
        for _ in 0..<2000 where await h.demo.requestCount(pathPrefix: prefix) < count { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// The records of the log, newest first, stored first.
    static func records(_ h: Harness) throws -> [RequestRecord] {
        try h.kiosk.debugger.flush()
        return try h.kiosk.debugger.records(matching: RequestFilter(limit: 100))
    }

    @Test("an unchanged resend of a GET while the same GET is in flight is sent on its own, with its own record linked to the original")
    func resendWhileTheSameRequestIsInFlight() async throws {
        try await withHarness { h in
            // Given a logged first fetch of a Rick and Morty page, no longer stored, so asking for it again sends the same GET
            let request = PageRequest(source: .rickandmorty, page: 2)
            _ = try await h.catalog.page(request)
            let original = try #require(try Self.records(h).first { $0.url.contains("page=2") })
            try h.database.clearCache()
            try await h.setFaults { $0.latencyMilliseconds = 400 }
            let path = "/api/character?page=2"
            let before = await h.demo.requestCount(pathPrefix: path)

            // When the page is asked for, and while that GET is at the upstream the original is resent unchanged
            let page = Task { try await h.catalog.page(request) }
            try await Self.waitForRequests(h, path, count: before + 1)
            let resent = try await h.kiosk.debugger.resend(original)
            _ = try await page.value

            // Then both reached the upstream, the resend is not a share of the other's answer, and it has its own
            // record, which names the original, while the page's record names nothing
            #expect(await h.demo.requestCount(pathPrefix: path) == before + 2)
            #expect(resent.response?.status == 200 && resent.response?.isCollapsed == false)
            let resentID = try #require(resent.recordID, "the resend left no record of its own")
            let records = try Self.records(h).filter { $0.url.contains("page=2") && $0.id != original.id }
            #expect(records.count == 2)
            #expect(records.first { $0.id == resentID }?.touchedBy.map(\.kind) == [.resend])
            #expect(records.first { $0.id != resentID }?.touchedBy.isEmpty == true)
        }
    }

    @Test("two resends of one request at once are two exchanges, each recorded and linked to the original")
    func twoResendsAtOnce() async throws {
        try await withHarness { h in
            // Given a logged request, and a slow upstream
            _ = try await h.catalog.page(PageRequest(source: .dogs))
            let original = try #require(try Self.records(h).first { $0.endpoint.hasPrefix("dogs") })
            try await h.setFaults { $0.latencyMilliseconds = 300 }
            let before = await h.demo.requestCount(pathPrefix: "/dogs.json")

            // When it is resent twice at once
            async let first = h.kiosk.debugger.resend(original)
            async let second = h.kiosk.debugger.resend(original)
            let (a, b) = try await (first, second)

            // Then the upstream was asked twice, the log holds two exchanges linked to the original, and each resend
            // points at one of them (the same one, the newest, when they were sent alike at the same moment)
            #expect(await h.demo.requestCount(pathPrefix: "/dogs.json") == before + 2)
            let linked = try Self.records(h).filter { $0.touchedBy.first?.kind == .resend && $0.touchedBy.first?.id == Int(original.id) }
            #expect(linked.count == 2)
            for id in [a.recordID, b.recordID] { #expect(linked.map(\.id).contains(try #require(id))) }
        }
    }
}
