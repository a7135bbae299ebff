import Foundation
import KioskCore
import KioskNetwork
@testable import KioskProxy
import NIOCore
import NIOPosix
import Testing

/// What Kiosk's own HTTP client (UpstreamConnections.swift) does that a library did for it before: content codings
/// undone for Kiosk's own requests only, the request framed and named, TLS through an outbound proxy's tunnel, and a
/// proxy's refusal put in words.
@Suite("Kiosk's HTTP client against real loopback servers")
struct UpstreamClientTests {
    /// Runs `body` with a transport configured by `configuration`, always shut down after.
    private func withTransport(_ configuration: TransportConfiguration,
                               _ body: (UpstreamTransport) async throws -> Void) async throws {
        let transport = UpstreamTransport(configuration: configuration)
        do {
            try await body(transport)
        } catch {
            await transport.shutdown()
            throw error
        }
        await transport.shutdown()
    }

    /// The fields the echo upstream says it received, by lowercased name.
    private func echoedFields(_ answer: HTTPResponse) throws -> [String: String] {
        let echo = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
        let pairs = try #require(echo["headers"] as? [[String]])
        return Dictionary(pairs.map { ($0[0].lowercased(), $0[1]) }) { first, _ in first }
    }

    @Test("An HTTPS upstream that takes the connection and never answers its TLS handshake is said to be one, not one with no route nor one that took no connection")
    func silentHandshake() async throws {
        // Given a server that accepts connections and says nothing
        let silent = try await LoopbackServer.start { _ in }
        defer { Task { await silent.stop() } }
        try await withTransport(TransportConfiguration(connectTimeout: .milliseconds(500))) { transport in
            // When an HTTPS request goes to it
            let url = URL(string: "https://127.0.0.1:\(silent.port)/x")!
            await #expect {
                _ = try await transport.send(HTTPRequest(url: url, endpoint: "test", purpose: .proxied))
            } throws: { error in
                // Then it fails as an upstream that took the connection and did not answer its handshake, in the log and to the app
                guard case .offline(_, .noHandshake)? = error.kioskError else { return false }
                let failure = ProxyMessages.failure(error, url: url)
                return failure.status == .gatewayTimeout
                    && failure.message.contains("it took the connection but did not answer its TLS handshake in time")
                    && error.kioskError?.description.contains("it took the connection but did not answer its TLS handshake in time") == true
            }
        }
    }

    @Test("An HTTPS upstream that reads the TLS hello and closes is said to have closed during the handshake")
    func closedDuringHandshake() async throws {
        // Given a server that closes each connection once it has read anything (the app's hello)
        let closing = try await LoopbackServer.start { try $0.pipeline.syncOperations.addHandler(CloseOnRead()) }
        defer { Task { await closing.stop() } }
        try await withTransport(TransportConfiguration(connectTimeout: .seconds(5))) { transport in
            // When an HTTPS request goes to it
            let url = URL(string: "https://127.0.0.1:\(closing.port)/x")!
            await #expect {
                _ = try await transport.send(HTTPRequest(url: url, endpoint: "test", purpose: .proxied))
            } throws: { error in
                // Then the failure says it closed during the handshake, not only that the handshake failed
                (error.kioskError?.description ?? "\(error)").contains("the TLS handshake with 127.0.0.1 failed: it closed the connection during the handshake")
            }
        }
    }

    /// Closes its connection at the first bytes it reads.
    private final class CloseOnRead: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.close(promise: nil) }
    }

    @Test("Kiosk's own request asks for gzip and reads the body decoded; a proxy's gets the upstream's bytes and coding as sent")
    func contentCodings() async throws {
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        // Given Kiosk's own transport
        try await withTransport(TransportConfiguration()) { transport in
            // When it asks the echo upstream, then for a gzip-coded body
            let echo = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo"))!, endpoint: "test"))
            let gzip = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/gzip"))!, endpoint: "test"))
            // Then the request said which codings it reads, and who it is, and named its host with the port
            let fields = try echoedFields(echo)
            #expect(fields["accept-encoding"] == "deflate, gzip")
            #expect(fields["user-agent"] == "Kiosk/1.0")
            #expect(fields["host"] == "127.0.0.1:\(upstream.port)")
            // And the body came decoded
            #expect(String(decoding: gzip.body, as: UTF8.self) == "hello, proxy\n")
        }
        // Given a proxy's transport, which passes requests and answers as they are
        try await withTransport(TransportConfiguration(passesThrough: true)) { transport in
            let echo = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo"))!, endpoint: "test"))
            let gzip = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/gzip"))!, endpoint: "test"))
            // Then it added neither field, and the body is the upstream's bytes with their coding named
            let fields = try echoedFields(echo)
            #expect(fields["accept-encoding"] == nil && fields["user-agent"] == nil)
            #expect(gzip.body == EchoUpstream.gzipped)
            #expect(gzip.headers["Content-Encoding"] == "gzip")
        }
    }

    @Test("A POST with no body says its length is 0, and one with a body sends it with its length")
    func requestFraming() async throws {
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withTransport(TransportConfiguration(passesThrough: true)) { transport in
            // When a POST without a body, then one with, go to the echo upstream on one kept-alive connection
            let empty = try await transport.send(HTTPRequest(method: "POST", url: URL(string: upstream.url("/echo"))!, endpoint: "test"))
            let full = try await transport.send(HTTPRequest(method: "POST", url: URL(string: upstream.url("/echo"))!,
                                                            body: Data("a=1".utf8), endpoint: "test"))
            // Then the first declared 0 bytes (not chunked) and the second its 3, received whole
            let emptyFields = try echoedFields(empty)
            #expect(emptyFields["content-length"] == "0" && emptyFields["transfer-encoding"] == nil, "\(emptyFields)")
            let echo = try #require(try JSONSerialization.jsonObject(with: full.body) as? [String: Any])
            #expect(echo["body"] as? String == "a=1")
            #expect(try echoedFields(full)["content-length"] == "3")
            // And a HEAD on the same connection, answered without a body, leaves it able to carry the next request
            let head = try await transport.send(HTTPRequest(method: "HEAD", url: URL(string: upstream.url("/echo"))!, endpoint: "test"))
            #expect(head.status == 200 && head.body.isEmpty)
            let after = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo?after=head"))!, endpoint: "test"))
            #expect(after.status == 200)
            #expect(after.timings?.connect == nil, "the connection was kept")
        }
    }

    @Test("A streamed upload of no declared length goes chunked whatever its method, so its bytes are never read as a request")
    func streamedUploadFraming() async throws {
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        try await withTransport(TransportConfiguration(passesThrough: true)) { transport in
            // Given a DELETE whose body streams (an app's upload past the buffer limit), with no length declared
            var request = HTTPRequest(method: "DELETE", url: URL(string: upstream.url("/echo"))!, endpoint: "test")
            request.bodyStream = BodyStream.slices(of: Data(repeating: 0x62, count: 5000), size: 1000)
            // When it is sent, then a GET on the same connection
            let answer = try await transport.send(request)
            let next = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo?next=1"))!, endpoint: "test"))
            // Then the upstream read it chunked and whole, and the next request as the next request
            let fields = try echoedFields(answer)
            #expect(fields["transfer-encoding"] == "chunked", "\(fields)")
            let echo = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
            #expect((echo["body"] as? String)?.count == 5000)
            let after = try #require(try JSONSerialization.jsonObject(with: next.body) as? [String: Any])
            #expect(after["method"] as? String == "GET" && after["uri"] as? String == "/echo?next=1")
        }
    }

    @Test("A streamed answer read slowly arrives whole, and its connection then carries the next exchange")
    func slowReaderGetsEveryByte() async throws {
        let upstream = try await EchoUpstream.start()
        defer { Task { await upstream.stop() } }
        // Given a proxy's transport holding at most 64 KB of a body, so a larger one streams
        try await withTransport(TransportConfiguration(maximumBodyBytes: 64 << 10, passesThrough: true)) { transport in
            // When an 8 MB answer comes and its reader pauses now and then
            let answer = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/big?bytes=8000000"))!, endpoint: "test"))
            let stream = try #require(answer.stream)
            var received = answer.body.count
            var chunks = 0
            while let chunk = try await stream.next() {
                received += chunk.count
                chunks += 1
                if chunks % 2 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            }
            // Then every byte came, in order of arrival, and the connection carries the next exchange
            #expect(received == 8_000_000)
            let next = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo"))!, endpoint: "test"))
            #expect(next.status == 200)
        }
    }

    @Test("An HTTPS upstream asked for by its IP address is reached, its certificate checked against that address")
    func httpsByAddress() async throws {
        // Given an HTTPS upstream whose certificate names 127.0.0.1
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
        defer { Task { await upstream.stop() } }
        var configuration = TransportConfiguration()
        configuration.additionalTrustRoots = [TestAuthority.shared.certificateFile.path]
        try await withTransport(configuration) { transport in
            // When the transport asks https://127.0.0.1:port/echo (no name for SNI)
            let answer = try await transport.send(HTTPRequest(url: URL(string: "https://127.0.0.1:\(upstream.port)/echo")!,
                                                              endpoint: "test"))
            // Then the upstream answered
            #expect(answer.status == 200)
        }
    }

    @Test("An HTTPS upstream behind an outbound HTTP proxy is reached through the proxy's tunnel, its certificate checked")
    func httpsThroughTunnel() async throws {
        // Given an HTTPS upstream of the test CA, and Kiosk's proxy (not intercepting: it tunnels what it is asked to)
        let upstream = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
        try await withProxy(to: upstream, stop: { await $0.stop() }) { proxy, upstream in
            var configuration = TransportConfiguration(
                proxy: ProxySettings(httpsProxy: URL(string: "http://127.0.0.1:\(proxy.port)")!, proxyLoopback: true))
            configuration.additionalTrustRoots = [TestAuthority.shared.certificateFile.path]
            try await withTransport(configuration) { transport in
                // When the transport asks the upstream for /echo over HTTPS
                let answer = try await transport.send(HTTPRequest(url: URL(string: upstream.secureURL("/echo?tunnel=1"))!,
                                                                  endpoint: "test"))
                // Then the upstream answered, having seen the request
                #expect(answer.status == 200)
                #expect(String(decoding: answer.body, as: UTF8.self).contains("tunnel=1"))
            }
            // And the proxy logged a tunnel to the upstream (once the transport's connection closed)
            let record = try await proxy.waitForRecord { $0.method == "CONNECT" && $0.url.contains("localhost:\(upstream.port)") }
            let logged = try proxy.records().map { "\($0.method) \($0.url)" }
            #expect(record != nil, "\(logged)")
        }
    }

    @Test("A connection left idle past the timeout is closed, HTTP/1.1 and HTTP/2 alike: the next request opens a new one",
          arguments: ["http/1.1", "h2"])
    func idleConnectionsClose(_ protocolName: String) async throws {
        // Given an upstream speaking the protocol, and a transport that keeps idle connections 2 s (long enough that a
        // loaded machine never lets one go between two requests made one after the other)
        let upstream: (port: Int, stop: @Sendable () async -> Void)
        if protocolName == "h2" {
            let server = try await HTTP2StatusUpstream.start(status: "200")
            upstream = (server.port, { await server.stop() })
        } else {
            let server = try await EchoUpstream.start(tls: try TestAuthority.shared.upstreamContext())
            upstream = (server.port, { await server.stop() })
        }
        var configuration = TransportConfiguration()
        configuration.additionalTrustRoots = [TestAuthority.shared.certificateFile.path]
        configuration.idleTimeout = .seconds(2)
        let url = URL(string: "https://localhost:\(upstream.port)/echo")!
        try await withTransport(configuration) { transport in
            // When it is asked three times: twice at once, then after 4 s of silence
            let first = try await transport.send(HTTPRequest(url: url, endpoint: "test"))
            let second = try await transport.send(HTTPRequest(url: url, endpoint: "test"))
            try await Task.sleep(for: .seconds(4))
            let third = try await transport.send(HTTPRequest(url: url, endpoint: "test"))
            // Then the first opened a connection, the second took it, and the third had to open another
            #expect([first.status, second.status, third.status] == [Int](repeating: 200, count: 3))
            #expect(first.timings?.connect != nil)
            #expect(second.timings?.connect == nil)
            #expect(third.timings?.connect != nil, "the idle connection was kept past its timeout")
        }
        await upstream.stop()
    }

    @Test("An outbound proxy that refuses the tunnel is named with its status, not taken for the upstream being offline")
    func tunnelRefused() async throws {
        // Given a "proxy" that answers every CONNECT with 407
        let refusing = try await LoopbackServer.start { channel in
            try channel.pipeline.syncOperations.addHandler(RefuseTunnel())
        }
        defer { Task { await refusing.stop() } }
        let settings = ProxySettings(httpsProxy: URL(string: "http://127.0.0.1:\(refusing.port)")!, proxyLoopback: true)
        try await withTransport(TransportConfiguration(proxy: settings)) { transport in
            // When the transport asks for an HTTPS URL through it
            let error = await #expect(throws: KioskError.self) {
                try await transport.send(HTTPRequest(url: URL(string: "https://localhost:9/echo")!, endpoint: "test"))
            }
            // Then the error says the proxy refused, with its status
            guard case .transport(_, let message)? = error else {
                Issue.record("failed as \(String(describing: error))")
                return
            }
            #expect(message.contains("refused to open a tunnel to localhost (its status 407)"), "\(message)")
        }
    }

    /// Answers whatever it is sent with a 407 and closes.
    private final class RefuseTunnel: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let answer = "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: answer)), promise: nil)
        }
    }
}
