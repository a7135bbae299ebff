import Foundation
import Hummingbird
import HummingbirdTesting
import KioskTestSupport
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import KioskWeb

@Suite("The web app's limit of connections open at once")
struct WebConnectionLimitTests {
    @Test("With its connections all taken the web app accepts no more; one closing lets the next browser in")
    func limitHoldsNewConnections() async throws {
        let harness = try await Harness.start()
        do {
            // Given the web app allowed two connections at once, and two browsers holding one each
            var configuration = WebConfiguration(host: "127.0.0.1", port: 0)
            configuration.maximumConnections = 2
            let bound = Mutex(0)
            let app = try buildApplication(kiosk: harness.kiosk, configuration: configuration, onListening: { port in bound.withLock { $0 = port } })
            // (Run as `kiosk serve` runs it: HummingbirdTesting's live mode rebuilds the configuration without the limit.)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await app.runService(gracefulShutdownSignals: []) }
                while bound.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
                let port = bound.withLock { $0 }
                // (Each has had an answer and keeps its connection: so the server took both before the third comes. Two
                // connections merely opened could wait in the listen queue, and one burst of accepts take all three.)
                var idle: [any Channel] = []
                for _ in 0..<2 { idle.append(try await keptAlive(port: port)) }
                // When a third asks for the manifest
                let answered = Mutex(false)
                let third = Task {
                    defer { answered.withLock { $0 = true } }
                    return try await fetch(port: port, "/manifest.webmanifest")
                }
                // Then it is not answered while the two stay open (its connection waits unaccepted)
                try await Task.sleep(for: .milliseconds(500))
                #expect(!answered.withLock { $0 })
                // And once one of them closes, it is
                try await idle[0].close()
                let answer = try await third.value
                #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer.prefix(200))")
                try await idle[1].close()
                group.cancelAll()
            }
        } catch {
            await harness.stop()
            throw error
        }
        await harness.stop()
    }

    @Test("By default the limit is the open-file limit less a reserve")
    func defaultFromOpenFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        #expect(WebConfiguration().maximumConnections == max(Int(limit.rlim_cur) - 128, 16))
    }
}

/// A connection to the server at `port` that asked for the manifest, kept alive, once the first bytes of its answer came.
private func keptAlive(port: Int) async throws -> any Channel {
    let answered = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(FirstBytes(answered)) }
        }
        .connect(host: "127.0.0.1", port: port).get()
    try await channel.writeAndFlush(ByteBuffer(string: "GET /manifest.webmanifest HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"))
    try await answered.futureResult.get()
    return channel
}

/// Completes its promise when the first bytes arrive, or fails it when the connection closes before.
private final class FirstBytes: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let promise: EventLoopPromise<Void>
    private var done = false

    init(_ promise: EventLoopPromise<Void>) { self.promise = promise }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !done else { return }
        done = true
        promise.succeed()
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done { done = true; promise.fail(ChannelError.eof) }
        context.fireChannelInactive()
    }
}

/// What the server at `port` answers to a GET of `path` on a connection of its own, read until it closes (15 s at most).
private func fetch(port: Int, _ path: String) async throws -> String {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .connect(host: "127.0.0.1", port: port) { channel in
            channel.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel) }
        }
    let timer = channel.channel.eventLoop.scheduleTask(in: .seconds(15)) { channel.channel.close(promise: nil) }
    defer { timer.cancel() }
    return try await channel.executeThenClose { inbound, outbound in
        try await outbound.write(ByteBuffer(string: "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"))
        var received = ""
        for try await chunk in inbound { received += String(buffer: chunk) }
        return received
    }
}
