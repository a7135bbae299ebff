import Foundation
@testable import KioskProxy
import NIOEmbedded
import NIOCore
import NIOPosix
import Synchronization
import Testing

@Suite("The proxy's connection budget, which keeps the process from running out of open files")
struct ConnectionBudgetTests {
    @Test("With its budget spent the proxy accepts no more connections; one closing lets the next app in, and the owner is told once")
    func spentBudgetHoldsNewConnections() async throws {
        let told = Mutex<[Int]>([])
        var configuration = ProxyConfiguration(port: 0, requestHeadTimeout: idleAppsStay)
        configuration.connections = ConnectionBudget(maximum: 2) { most in told.withLock { $0.append(most) } }
        let budget = configuration.connections
        try await withProxy(configuration) { proxy, upstream in
            // Given two apps holding connections open, which spend a budget of two
            var idle: [any Channel] = []
            for _ in 0..<2 {
                idle.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: proxy.port).get())
            }
            try await waitUntil { budget.open == 2 }
            // When a third app sends a request
            let third = Task {
                try await rawExchange(port: proxy.port, "GET \(upstream.url("/echo")) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout: .seconds(15))
            }
            // Then its connection waits in the kernel's queue, unaccepted, rather than costing files the process lacks
            try await Task.sleep(for: .milliseconds(500))
            #expect(budget.open == 2)
            #expect(told.withLock { $0 } == [2])
            // And once one of the first two closes, it is accepted and answered
            try await idle[0].close()
            let answer = try await third.value
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            // And the owner heard of the spent budget once, however often it was spent
            #expect(told.withLock { $0 } == [2])
            try await idle[1].close()
        }
    }

    @Test("A reverse listener held by the forward listener's connections is let in when one of those closes (one budget for both)")
    func budgetSharedAcrossListeners() async throws {
        let budget = ConnectionBudget(maximum: 2)
        var forward = ProxyConfiguration(port: 0, requestHeadTimeout: idleAppsStay)
        forward.connections = budget
        try await withProxy(forward) { proxy, upstream in
            var reverse = ProxyConfiguration(port: 0)
            reverse.connections = budget
            reverse.reverseTo = URL(string: upstream.url("/"))
            let reverseProxy = try await ProxyHarness.start(reverse)
            // Given two apps holding connections to the forward listener, which spend the budget both listeners share
            var idle: [any Channel] = []
            for _ in 0..<2 {
                idle.append(try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: proxy.port).get())
            }
            try await waitUntil { budget.open == 2 }
            // When an app asks the reverse listener
            let answered = Mutex(false)
            let viaReverse = Task {
                defer { answered.withLock { $0 = true } }
                return try await rawExchange(port: reverseProxy.port, "GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", timeout: .seconds(15))
            }
            // Then it waits while the forward listener's two stay open
            try await Task.sleep(for: .milliseconds(500))
            #expect(!answered.withLock { $0 })
            // And a close on the other listener lets it in (a limiter counting each listener's own would wait for ever)
            try await idle[0].close()
            let answer = try await viaReverse.value
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
            try await idle[1].close()
            await reverseProxy.stop()
        }
    }

    @Test("A connection a listener accepts in the moment another listener spent the budget waits, unread, until one closes")
    func acceptedWhileSpentWaits() throws {
        // Given a listener of a budget of one, which another listener's connection has just spent: the notice of it
        // waits on this listener's loop, which handles a socket found ready first
        let budget = ConnectionBudget(maximum: 1)
        let loop = EmbeddedEventLoop()
        let listener = EmbeddedChannel(handler: AcceptGate(budget: budget), loop: loop)
        let otherListenersConnection = loop.makePromise(of: Void.self)
        budget.opened(otherListenersConnection.futureResult)
        // When this listener accepts a connection before the notice is run
        let app = EmbeddedChannel(loop: loop)
        try listener.writeInbound(app as any Channel)
        loop.run()
        // Then the connection is not let in, nor counted
        let early = try listener.readInbound(as: (any Channel).self)
        #expect(early == nil)
        #expect(budget.open == 1)
        // And once the other connection closes, it is let in and counted
        otherListenersConnection.succeed()
        loop.run()
        let admitted = try listener.readInbound(as: (any Channel).self)
        #expect(admitted != nil)
        #expect(budget.open == 1)
        _ = try listener.finish()
    }

    @Test("The budget is half the open-file limit less a reserve, and never below a few connections",
          arguments: [(1024, 448), (200, 36), (65_536, 32_704), (100, 8), (0, 8)])
    func budgetFromLimit(_ limit: Int, _ maximum: Int) {
        #expect(ConnectionBudget.maximum(forOpenFileLimit: limit) == maximum)
    }
}

/// The apps holding connections send nothing: on a machine slow enough for a test to take a minute (a loaded CI
/// runner), the proxy's default deadline for a request head (20 s) would close one of them and free the budget
/// before the test closes it, which the test would read as the budget not holding.
private let idleAppsStay: Duration = .seconds(600)

/// Polls `condition` every 10 ms for up to 10 s; throws when it never holds.
private func waitUntil(_ condition: () -> Bool) async throws {
    for _ in 0..<1000 {
        if condition() { return }
        try await Task.sleep(for: .milliseconds(10))
    }
    Issue.record("the condition never held within 10 s")
}
