import AsyncHTTPClient
import Foundation
import KioskCore
import KioskDebugger
import KioskNetwork
import KioskProxy
import NIOCore
import Testing

/// How Kiosk's one HTTP transport reaches upstreams beyond plain HTTP/1.1: one that speaks only HTTP/2, and one behind
/// an HTTP proxy. What any replacement of the transport's client must keep.
@Suite("The transport's ways to an upstream: HTTP/2, and through an outbound HTTP proxy")
struct UpstreamProtocolTests {
    @Test("An HTTPS upstream that speaks only HTTP/2 answers apps through the intercepting proxy, several requests at once, each logged")
    func http2Upstream() async throws {
        // Given an HTTPS upstream whose TLS offers h2 alone (ALPN), answering every request 200 "hello"
        let upstream = try await HTTP2StatusUpstream.start(status: "200")
        try await withProxy(to: upstream, stop: { await $0.stop() }, intercepting: true) { proxy, upstream in
            // When an app asks for eight paths at once through the proxy, over HTTP/1.1 inside its CONNECT
            let answers = try await withThrowingTaskGroup(of: (String, Int, String).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        // (half of them answered without a length, as HTTP/2 allows)
                        let path = index.isMultiple(of: 2) ? "/h2/\(index)" : "/h2/nolength/\(index)"
                        let answer = try await proxy.http.execute(HTTPClientRequest(url: upstream.secureURL(path)), timeout: .seconds(20))
                        return (path, Int(answer.status.code), String(buffer: try await answer.body.collect(upTo: 1 << 20)))
                    }
                }
                return try await group.reduce(into: [:]) { $0[$1.0] = ($1.1, $1.2) }
            }
            // Then each gets the upstream's answer whole
            #expect(answers.count == 8)
            for (path, answer) in answers {
                #expect(answer.0 == 200 && answer.1 == "hello", "\(path): \(answer)")
            }
            // And each exchange is in the log, with its status
            for index in 0..<8 {
                let path = index.isMultiple(of: 2) ? "/h2/\(index)" : "/h2/nolength/\(index)"
                let record = try await proxy.waitForRecord { $0.url == upstream.secureURL(path) }
                #expect(record?.status == 200, "\(path)")
                // (with the fields the upstream sent: HTTP/2 has no Transfer-Encoding, which NIO's codec adds to a head without a length)
                #expect(record?.responseHeaders.contains { $0.name.lowercased() == "transfer-encoding" } == false, "\(record?.responseHeaders ?? [])")
                // (and the protocol the upstream spoke, which the log keeps and an HTTP Archive says, as mitmproxy writes it)
                #expect(record?.httpVersion == "HTTP/2.0")
                let har = try JSONSerialization.jsonObject(with: HAR.export(record.map { [$0] } ?? [])) as? [String: Any]
                let entry = ((har?["log"] as? [String: Any])?["entries"] as? [[String: Any]])?.first
                #expect((entry?["response"] as? [String: Any])?["httpVersion"] as? String == "HTTP/2.0")
                #expect((entry?["request"] as? [String: Any])?["httpVersion"] as? String == "HTTP/2.0")
            }
        }
    }

    @Test("With an HTTP proxy set (loopback included), the transport's request reaches its upstream through that proxy and the answer comes back whole")
    func throughOutboundProxy() async throws {
        // Given an upstream, and Kiosk's own proxy (not intercepting: what it is asked to tunnel passes unread) set as the
        // transport's HTTP proxy, for loopback destinations too
        try await withProxy { proxy, upstream in
            let settings = ProxySettings(httpProxy: URL(string: "http://127.0.0.1:\(proxy.port)")!, proxyLoopback: true)
            let transport = UpstreamTransport(configuration: TransportConfiguration(proxy: settings))
            // When the transport asks the upstream for /echo
            let answer: HTTPResponse
            do {
                answer = try await transport.send(HTTPRequest(url: URL(string: upstream.url("/echo?through=proxy"))!, endpoint: "test"))
            } catch {
                await transport.shutdown()
                throw error
            }
            // (The proxy logs a tunnel once it closes: the transport's kept-alive connection closes with it.)
            await transport.shutdown()
            // Then the answer is the upstream's, which saw the request
            #expect(answer.status == 200)
            #expect(String(decoding: answer.body, as: UTF8.self).contains("through=proxy"))
            #expect(upstream.requests == 1)
            // And it went through the proxy, whose log holds the exchange (a tunnel to the upstream, or the request itself)
            let record = try await proxy.waitForRecord { $0.url.contains("127.0.0.1:\(upstream.port)") }
            let logged = try proxy.records().map { "\($0.method) \($0.url)" }
            #expect(record != nil, "\(logged)")
        }
    }
}
