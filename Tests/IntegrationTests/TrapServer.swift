import Foundation
import Hummingbird
import Synchronization

/// A local HTTP service that counts every request it gets — the target an attacker would aim Kiosk at —
/// and can play a hostile upstream: `/redirect?to=URL` answers 302 to any URL, `/slow-body?ms=N` sends its
/// head and half of a 1 KiB body at once and the other half N ms later, anything else a small PNG (or, for
/// `.json` paths, a dogs document).
final class TrapServer: Sendable {
    private let hits = Mutex<[String]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let boundPort = Mutex(0)

    /// The port it listens on, on 127.0.0.1.
    var port: Int { boundPort.withLock { $0 } }
    /// `http://127.0.0.1:port`.
    var origin: String { "http://127.0.0.1:\(port)" }
    /// Paths requested so far.
    var requests: [String] { hits.withLock { $0 } }

    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0]

    /// Starts listening on a free loopback port.
    static func start() async throws -> TrapServer {
        let server = TrapServer()
        let router = Router()
        router.get("**") { request, _ -> Response in
            server.hits.withLock { $0.append(request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")) }
            if request.uri.path == "/redirect", let target = request.uri.queryParameters.get("to") {
                return Response(status: .found, headers: [.location: target])
            }
            if request.uri.path == "/slow-body" {
                let pause = request.uri.queryParameters.get("ms").flatMap { Int($0) } ?? 300
                let half = ByteBuffer(repeating: UInt8(ascii: "x"), count: 512)
                return Response(status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody(contentLength: 1024) { writer in
                    try await writer.write(half)
                    try await Task.sleep(for: .milliseconds(pause))
                    try await writer.write(half)
                    try await writer.finish(nil)
                })
            }
            if request.uri.path.hasSuffix(".json") {
                let dogs = #"[{"dogName":"Rex","description":"A good dog","age":3,"image":"\#(server.origin)/rex.png"}]"#
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: dogs)))
            }
            return Response(status: .ok, headers: [.contentType: "image/png"], body: .init(byteBuffer: ByteBuffer(bytes: png)))
        }
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        var app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                              onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) })
        app.logger.logLevel = .critical
        let configured = app
        server.task.withLock { $0 = Task { try? await configured.run() } }
        for await port in bound {
            server.boundPort.withLock { $0 = port }
            break
        }
        return server
    }

    /// Closes the listener.
    func stop() async {
        let running = task.withLock { $0 }
        running?.cancel()
        await running?.value
    }
}
