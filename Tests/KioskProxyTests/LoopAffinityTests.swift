import Foundation
import KioskCore
import KioskNetwork
import NIOCore
import NIOPosix
import Testing
@testable import KioskProxy

@Suite("A proxied exchange stays on its app connection's event loop")
struct LoopAffinityTests {
    @Test("An exchange made on an event loop goes out on a connection of that loop's own, kept for its next exchanges")
    func upstreamConnectionOfTheSameLoop() async throws {
        let upstream = try await ScriptedUpstream.start()
        let transport = UpstreamTransport(configuration: TransportConfiguration(passesThrough: true))
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        try #require(loops.count >= 2, "the shared group has one loop here")
        let url = try #require(URL(string: upstream.url("/item")))
        /// One exchange run as a proxied one is, on `loop`'s executor; whether its answer came back on that loop.
        func exchange(on loop: any EventLoop) async throws -> Bool {
            try await withTaskExecutorPreference(EventLoopTaskExecutor(loop)) {
                let answer = try await transport.send(HTTPRequest(url: url, endpoint: "test"))
                #expect(answer.status == 200)
                return MultiThreadedEventLoopGroup.currentEventLoop === loop
            }
        }

        // Given exchanges made one after the other on the first loop, then on the second, then on the first again
        var onTheirLoop: [Bool] = []
        for loop in [loops[0], loops[0], loops[1], loops[0], loops[1]] {
            onTheirLoop.append(try await exchange(on: loop))
        }

        // Then each answer came back on the loop that asked, and the upstream saw one connection a loop: a loop's
        // exchanges reuse its own connection, and never one of the other loop's (a thread hop each way)
        #expect(onTheirLoop == [true, true, true, true, true])
        #expect(upstream.requests.count == 5)
        #expect(upstream.connections == 2)
        await transport.shutdown()
        await upstream.stop()
    }
}
