import Foundation
public import KioskCore
package import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOHTTP2
import NIOPosix
package import NIOSSL
import Synchronization

/// Timeouts and limits for the real HTTP transport.
public struct TransportConfiguration: Sendable, Hashable {
    /// How long to wait for a TCP connection before calling the upstream unreachable.
    public var connectTimeout: Duration
    /// How long a whole request may take, from sending to the last body byte.
    public var requestTimeout: Duration
    /// Bodies larger than this are refused (protects memory from a misbehaving upstream).
    public var maximumBodyBytes: Int
    /// HTTP proxies, and which hosts bypass them.
    public var proxy: ProxySettings
    /// Where to connect for an origin instead of resolving its host, as curl's `--connect-to` does:
    /// the embedded demo upstream's one canonical origin goes to whichever loopback port it has now.
    /// The request keeps its URL and `Host`, so what is stored and logged names the canonical origin.
    public var connectOverrides: [Origin: Origin]
    /// Whether requests and answers pass as they are, as a proxy must pass them: no decompression (the app gets
    /// the bytes and the Content-Encoding the upstream sent) and no User-Agent of Kiosk's added.
    public var passesThrough: Bool
    /// PEM files of certificate authorities trusted for upstream HTTPS besides the system's (a company CA, a local
    /// development server's).
    public var additionalTrustRoots: [String] = []
    /// How long a connection to an upstream is kept open with nothing to carry, HTTP/1.1 or HTTP/2: 60 s.
    public var idleTimeout: Duration = .seconds(60)
    /// For a proxy (`passesThrough`): how long after its head a body (of declared length or not) may take to end before it is
    /// streamed on rather than held whole (see `ResponseCollector`): 1 s.
    public var slowBodyDelay: Duration = .seconds(1)

    /// Why the PEM file at `path` cannot be a trust root (unreadable, or no certificate in it), nil when it can.
    public static func trustRootProblem(atPath path: String) -> String? {
        guard FileManager.default.isReadableFile(atPath: path) else { return "\(path) cannot be read" }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            // A DER file (what a browser's export and `kiosk proxy ca --der` write) says so by its bytes: how to convert it.
            if (try? NIOSSLCertificate.fromDERFile(path)) != nil {
                return "\(path) holds a DER certificate, not PEM: convert it with `openssl x509 -inform der -in \(path) -out ca.pem` "
                    + "and give ca.pem"
            }
            return "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        }
        // A root trusted here vouches for every upstream it signed: one browsers and curl refuse would let an app reach,
        // through Kiosk, what it could not directly.
        if let weak = certificates.lazy.compactMap({ try? $0.toDERBytes() }).compactMap(CertificateStrength.keyWeakness(ofDER:)).first {
            return "\(path) holds a certificate Kiosk will not trust: \(weak)"
        }
        return nil
    }
    /// Whether upstream HTTPS certificates are checked. Off only for `kiosk proxy --insecure-upstream`, which says so
    /// loudly on start and notes it on every HTTPS exchange it sends.
    public var verifiesCertificates = true
    /// What the bodies held whole add up to at most, across the process (a proxy's: `passesThrough`); past it answers
    /// stream on instead of being held. nil: no budget but the per-body limit.
    public var heldBodies: HeldBodies?

    /// 5 s to connect, 15 s per request, 32 MiB per body, no proxy, no overrides, bodies decompressed.
    public init(connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(15),
                maximumBodyBytes: Int = 32 << 20, proxy: ProxySettings = .none, connectOverrides: [Origin: Origin] = [:],
                passesThrough: Bool = false) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maximumBodyBytes = maximumBodyBytes
        self.proxy = proxy
        self.connectOverrides = connectOverrides
        self.passesThrough = passesThrough
    }
}

/// The production `HTTPTransport`, on Kiosk's own client (UpstreamConnections.swift). It fails fast when a host refuses
/// connections (no silent connection retries: the offline fallback must not wait), and turns every transport failure into
/// a `KioskError` that says what happened. It follows no redirect: `PolicyTransport` above it follows them, each target
/// checked by the outbound policy.
public final class UpstreamTransport: HTTPTransport {
    /// One pool of connections per event loop of the shared group; nil once shut down, so a request still running (a
    /// background revalidation) cannot open a connection nobody will close. A request made on an event loop (a proxied
    /// one: see KioskProxy's EventLoopTaskExecutor) is carried by that loop's pool, so no exchange crosses threads between
    /// the app's connection and the upstream's; one made off the loops by any loop's.
    private let pools = Mutex<[ObjectIdentifier: UpstreamPool]?>([:])
    private let configuration: TransportConfiguration
    private let connector: UpstreamConnector

    /// Creates a transport whose connections run on the shared event loop group, looking names up with `resolver` (the
    /// outbound policy's: the addresses it checked are the ones dialled).
    public init(configuration: TransportConfiguration = TransportConfiguration(), resolver: any HostResolver = SystemHostResolver()) {
        self.configuration = configuration
        connector = UpstreamConnector(connectTimeout: TimeAmount(configuration.connectTimeout),
                                      tls: Self.upstreamTLS(trusting: configuration.additionalTrustRoots,
                                                            verifies: configuration.verifiesCertificates),
                                      decompresses: !configuration.passesThrough, resolver: resolver)
    }

    /// The pool of `loop`, made on first use.
    private func pool(on loop: any EventLoop) throws(KioskError) -> UpstreamPool {
        try pools.withLock { pools throws(KioskError) in
            guard let open = pools else { throw KioskError.cancelled }
            if let pool = open[ObjectIdentifier(loop)] { return pool }
            let pool = UpstreamPool(loop: loop, connector: connector, idleTimeout: TimeAmount(configuration.idleTimeout))
            pools?[ObjectIdentifier(loop)] = pool
            return pool
        }
    }

    /// The shared group's loops, which live as long as the process.
    private static let sharedLoops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// The loop of the shared group this code runs on, if any. Only those carry exchanges: a loop of another group may be
    /// shut down, and its identity given to a new one.
    private static func sharedLoop() -> (any EventLoop)? {
        guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return nil }
        return sharedLoops.first { $0 === current }
    }

    /// Closes every connection; call once when the process no longer needs the transport.
    public func shutdown() async {
        let all = pools.withLock { pools in
            defer { pools = nil }
            return pools.map { Array($0.values) } ?? []
        }
        for pool in all { try? await pool.close().get() }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let scheme = request.url.scheme?.lowercased()
        let tls = scheme == "https"
        var connectHost = request.url.host(percentEncoded: false) ?? ""
        var connectPort = request.url.port ?? (tls ? 443 : 80)
        var hostHeader: String?
        // Only the demo upstream's origin has an override: an app's request through the proxy makes no Origin for none.
        if !configuration.connectOverrides.isEmpty, let origin = Origin(request.url), let override = configuration.connectOverrides[origin] {
            hostHeader = request.url.port.map { "\(origin.host):\($0)" } ?? origin.host
            connectHost = override.host
            connectPort = override.port
        }
        guard scheme == "http" || tls, !connectHost.isEmpty else {
            throw KioskError.transport(url: request.url.redactedString, message: "only http:// and https:// URLs with a host can be asked")
        }
        let proxy = configuration.proxy.proxy(for: request.url, connectingTo: connectHost, port: connectPort)
        let key = UpstreamKey(tls: tls, host: connectHost, port: connectPort,
                              proxy: proxy.flatMap { url in url.host(percentEncoded: false).map { ProxyAddress(host: $0, port: url.port ?? 80) } },
                              publicOnly: request.addressesMustBePublic)
        let head = requestHead(request, hostHeader: hostHeader)

        if !configuration.verifiesCertificates, tls { request.note(Self.insecureNote(request.endpoint)) }
        // A proxy streams what it cannot hold (an event stream, a body past the limit); Kiosk's own requests never do.
        let streams = configuration.passesThrough
        // Off the loops, the loop is the upstream's own (by its key), so that its connections are found again.
        let loop = Self.sharedLoop() ?? Self.sharedLoops[Int(UInt(bitPattern: key.hashValue) % UInt(Self.sharedLoops.count))]
        let pool = try pool(on: loop)
        let body = request.bodyStream == nil ? request.body.map { ByteBuffer(bytes: $0) } : nil
        // A request a server let die unanswered on a connection it had kept open goes again, on another connection,
        // when sending it twice is harmless (see `StaleConnection`).
        let replayable = request.bodyStream == nil && StaleConnection.replayableMethods.contains(request.method)
        var attempt = 1
        while true {
            let start = ContinuousClock.now
            let ready = loop.makePromise(of: ResponseCollector.Collected.self)
            let collector = ResponseCollector(limit: configuration.maximumBodyBytes, streams: streams, budget: configuration.heldBodies,
                                              slowBodyDelay: TimeAmount(configuration.slowBodyDelay), holdsDeclaredLength: request.holdsWholeAnswer,
                                              url: request.url, progress: request.recorder, ready: ready)
            do {
                return try await send(request, head: head, body: body, key: key, streams: streams, pool: pool,
                                      collector: collector, ready: ready, start: start)
            } catch {
                if !(error is CancellationError), replayable, attempt < StaleConnection.maxAttempts,
                   StaleConnection.diedUnanswered(collector.failure ?? error, marks: collector.marks) {
                    attempt += 1
                    continue
                }
                throw await failure(error, collector: collector, host: request.url.host ?? collector.url,
                                    port: request.url.port.flatMap { $0 == (tls ? 443 : 80) ? nil : $0 }, proxy: proxy,
                                    connectHost: connectHost, connectPort: connectPort, publicOnly: key.publicOnly)
            }
        }
    }

    /// The request's head as it goes on the wire: its target in origin form, its fields made whole once, with `Host`, a `Content-Length` for a body held whole, and Kiosk's
    /// `User-Agent` on its own requests.
    private func requestHead(_ request: HTTPRequest, hostHeader: String?) -> HTTPRequestHead {
        var fields: [(String, String)] = []
        fields.reserveCapacity(request.headers.fields.count + 3)
        var hasHost = false, hasLength = false, hasAgent = false
        for field in request.headers {
            if HTTPHeaderFields.sameName(field.name, "Host") {
                if hostHeader != nil { continue }
                hasHost = true
            } else if HTTPHeaderFields.sameName(field.name, "Content-Length") || HTTPHeaderFields.sameName(field.name, "Transfer-Encoding") {
                hasLength = true
            } else if HTTPHeaderFields.sameName(field.name, "User-Agent") {
                hasAgent = true
            }
            fields.append((field.name, field.value))
        }
        if let hostHeader {
            fields.insert(("Host", hostHeader), at: 0)
        } else if !hasHost {
            let host = request.url.host(percentEncoded: true) ?? ""
            let shown = host.contains(":") ? "[\(host)]" : host
            fields.insert(("Host", request.url.port.map { "\(shown):\($0)" } ?? shown), at: 0)
        }
        // A body held whole is framed by its length, and so is none at all where one is expected (a POST with nothing).
        let length = request.body?.count ?? 0
        if !hasLength, request.bodyStream == nil, length > 0 || !Self.bodylessMethods.contains(request.method) {
            fields.append(("Content-Length", String(length)))
        }
        // A streamed upload of no declared length goes chunked, whatever its method (NIO's encoder frames only the
        // methods that usually carry a body): unframed, its bytes would be read as the next request.
        if !hasLength, request.bodyStream != nil { fields.append(("Transfer-Encoding", "chunked")) }
        if !hasAgent && !configuration.passesThrough { fields.append(("User-Agent", "Kiosk/1.0")) }
        let path = request.url.path(percentEncoded: true)
        let query = request.url.query(percentEncoded: true)
        // An OPTIONS of a whole server (`OPTIONS http://host:8001`, no path or query) goes as `OPTIONS *`: the last proxy
        // on the way must send that form (RFC 9112 §3.2.4), where `/` would ask about the root resource instead.
        let target = request.method == "OPTIONS" && path.isEmpty && query == nil ? "*"
            : (path.isEmpty ? "/" : path) + (query.map { "?\($0)" } ?? "")
        return HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: target,
                               headers: HTTPHeaders(fields))
    }

    /// Methods whose requests carry no body as a rule: sent without one, they say nothing of its length.
    private static let bodylessMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE", "DELETE", "CONNECT"]

    /// One try of `request` on a connection of `pool`: the answer, or the error as it came.
    private func send(_ request: HTTPRequest, head: HTTPRequestHead, body: ByteBuffer?, key: UpstreamKey, streams: Bool,
                      pool: UpstreamPool, collector: ResponseCollector, ready: EventLoopPromise<ResponseCollector.Collected>,
                      start: ContinuousClock.Instant) async throws -> HTTPResponse {
        let loop = pool.loop
        let url = request.url
        let timeout = min(request.timeout ?? configuration.requestTimeout, configuration.requestTimeout)
        let side = request.appSide
        let interim: ((HTTPResponseHead) -> Void)? = side.map { side in
            { head in side.interim(status: Int(head.status.code), fields: head.headers.map { (name: $0.name, value: $0.value) }) }
        }
        let exchange = UpstreamExchange(head: head, body: body, upload: request.bodyStream, collector: collector, interim: interim) { failure in
            collector.endWatch()
            guard let failure else { return collector.deliver(collector.didFinish()) }
            collector.noteFailure(failure)
            // An answer ended by the connection's closing, over TLS without close_notify (Python's ssl servers, many
            // embedded ones): refused by a strict client, since a cut cannot be told from the end; browsers and curl
            // take it, and so does Kiosk, saying so on the exchange.
            if (failure as? NIOSSLError) == .uncleanShutdown, let answer = collector.closeDelimitedAnswer() {
                request.note(ExchangeTouch(kind: .uncleanEnd, id: 0, name: request.endpoint, detail: "the upstream closed its TLS "
                    + "connection without close_notify to end this answer, which declared no length: its end was taken as the "
                    + "body's, though a cut there could not be told apart"))
                return collector.deliver(.success(answer))
            }
            // A stream cut short ends with the same words as an answer that never came.
            collector.deliver(.failure(failure is KioskError ? failure : Self.classify(
                failure, url: url.redactedString, host: url.host ?? url.redactedString, expectedLength: collector.expectedLength,
                received: collector.received)))
        }
        let begin: @Sendable () -> Void = {
            // The timer bounds the wait for the answer — for a proxy's (`streams`), for its head: the body, held or
            // streamed, may then take as long as data keeps coming, until none came for the transport's timeout, as it
            // would without the proxy in between.
            collector.watch(timeout: TimeAmount(timeout), idle: TimeAmount(self.configuration.requestTimeout),
                            uploads: request.bodyStream != nil, on: loop) {
                // An answer whose head came and whose body then stopped is no answer that never came: said as such.
                collector.deliver(.failure(collector.hasHead
                    ? KioskError.stalledBody(url: url.redactedString,
                                             seconds: (collector.waitsForSilence ? self.configuration.requestTimeout : timeout).seconds,
                                             expected: collector.expectedLength ?? 0, received: collector.received)
                    : KioskError.timeout(url: url.redactedString, seconds: timeout.seconds)))
                exchange.cancel()
            }
            switch pool.lease(key, url: url) {
            case .reused(let connection):
                collector.noteConnection(reused: true, setup: nil)
                connection.start(exchange)
            case .opening(let opening):
                opening.assumeIsolatedUnsafeUnchecked().whenComplete { result in
                    switch result {
                    case .success(let connection):
                        collector.noteConnection(reused: false, setup: connection.setup)
                        connection.start(exchange)
                    case .failure(let error):
                        exchange.end(error)
                    }
                }
            }
        }
        if loop.inEventLoop { begin() } else { loop.execute(begin) }
        do {
            let response = try await withTaskCancellationHandler {
                try await ready.futureResult.get()
            } onCancel: {
                loop.execute { exchange.cancel() }
            }
            // Made whole in one list (with room for what the layers above add: Cache-Status, Age), not grown field by field.
            var list: [(name: String, value: String)] = []
            list.reserveCapacity(response.head.headers.count + 2)
            for header in response.head.headers { list.append((name: header.name, value: header.value)) }
            let timings = RequestTimings(start: start, marks: response.marks, setup: response.marks.setup, end: .now)
            var answer = HTTPResponse(status: Int(response.head.status.code), headers: HTTPHeaderFields(list),
                                      body: response.body, url: request.url, timings: timings)
            answer.stream = response.stream
            answer.isSlowToEnd = response.slow
            answer.httpVersion = "HTTP/\(response.head.version.major).\(response.head.version.minor)"
            return answer
        } catch is CancellationError {
            throw KioskError.cancelled
        }
    }

    /// What a failed exchange is to its caller: `error` in the words of `classify`, an untrusted certificate's told apart,
    /// a host that refused the connection named with the URL's `port` when it is not the scheme's own.
    private func failure(_ error: any Error, collector: ResponseCollector, host: String, port: Int?, proxy: URL?,
                         connectHost: String, connectPort: Int, publicOnly: Bool) async -> KioskError {
        let redacted = collector.url
        let classified = error as? KioskError
            ?? Self.classify(error, url: redacted, host: host, expectedLength: collector.expectedLength,
                             received: collector.received)
        // An untrusted certificate: which of expired, not yet valid or unknown issuer, read from the certificate
        // itself (not through an HTTP proxy, which would have to be asked for a tunnel first).
        // Its connection dials what the exchange's would: addresses looked up again, refused as the exchange's would be.
        // Only a chain BoringSSL could not verify: a certificate refused for its make or its strength says why already.
        if case .transport(_, let message) = classified, Self.isUnverifiedChain(message), proxy == nil,
           let addresses = try? await DialAddresses.look(up: connectHost, port: connectPort, publicOnly: publicOnly,
                                                         resolver: connector.resolver, within: .seconds(3), url: { redacted }),
           let precise = await Self.diagnosedTrustFailure(message, host: host, certificateOf: connectHost, at: addresses,
                                                          trusting: configuration.additionalTrustRoots) {
            return KioskError.transport(url: redacted, message: precise)
        }
        // "Nothing listens on that port" is of a port: a local server on :3000 not started is told from one on :3001; and
        // a firewall may drop one port's connections and not another's.
        if case .offline(let name, let reason) = classified, [.refused, .noAnswer, .noHandshake].contains(reason), let port, proxy == nil,
           name == host {
            return .offline(host: (name.contains(":") && !name.hasPrefix("[") ? "[\(name)]" : name) + ":\(port)", reason: reason)
        }
        return classified
    }

    /// How many times its size an answer's content coding may expand before it is refused as a decompression bomb.
    static let decompressionRatio = 50

    /// Maps the client's and NIO's errors onto the few cases a user can act on.
    static func classify(_ error: any Error, url: String, host: String, expectedLength: Int?, received: Int) -> KioskError {
        if let status = error as? NotAnHTTPStatus {
            return .transport(url: url, message: "the upstream answered with the status \(status.shown), which is not an HTTP "
                + "status (they run from 100 to 599)")
        }
        if let upstream = error as? UpstreamError {
            switch upstream {
            case .tlsHandshakeTimeout:
                // Connected, and nothing answered the handshake in time (a server that is no TLS server, one that hangs):
                // not "no route", nor "no answer to the connection" — the connection was taken.
                return .offline(host: host, reason: .noHandshake)
            case .cancelled, .shutDown:
                return .cancelled
            case .tunnelRefused(let status):
                return .transport(url: url, message: status == 0
                    ? "the HTTP proxy did not answer the request for a tunnel to \(host) in HTTP"
                    : "the HTTP proxy refused to open a tunnel to \(host) (its status \(status))")
            case .closed:
                if let expectedLength, received < expectedLength {
                    return .truncatedBody(url: url, expected: expectedLength, received: received)
                }
                return .transport(url: url, message: "the connection closed before the response was complete")
            }
        }
        if let failure = connectionFailure(error, url: url, host: host) { return failure }
        // The body's coding, undone as it came, went wrong: said so, not as a body cut short (which it also is).
        if let decompression = error as? NIOHTTPDecompression.DecompressionError {
            return .unreadableAnswer(url: url, problem: decompression == .limit ? .expandsTooMuch(ratio: decompressionRatio) : .corruptCoding)
        }
        // Before the count of bytes, which an HTTP/2 answer's body does not keep: its length is checked by NIO's codec.
        if let reason = http2Failure(error) { return .transport(url: url, message: reason) }
        if let expectedLength, received < expectedLength {
            return .truncatedBody(url: url, expected: expectedLength, received: received)
        }
        if let parserError = error as? HTTPParserError {
            // The connection closed inside a body whose end only its framing marks (a chunked one's last chunk): cut short,
            // with how much came (NIO says "stream ended at an unexpected time").
            guard parserError != .invalidEOFState else { return .truncatedBody(url: url, expected: expectedLength ?? 0, received: received) }
            return .transport(url: url, message: unreadableAnswer(parserError))
        }
        // NIO's own words name the system call that saw it ("read(descriptor:pointer:size:): Connection reset by peer").
        if let ioError = error as? IOError, ioError.errnoCode == ECONNRESET || ioError.errnoCode == EPIPE {
            return .transport(url: url, message: ioError.errnoCode == ECONNRESET
                ? "the upstream reset the connection (ECONNRESET) before its answer was complete"
                : "the upstream closed the connection (EPIPE) while the request was still being sent")
        }
        if (error as? NIOSSLError) == .uncleanShutdown {
            return .transport(url: url, message: "the upstream closed its TLS connection (without TLS's close_notify) before its "
                              + "answer was complete")
        }
        let text = String(describing: error)
        if text.contains("invalidEOFState") || text.contains("EOF") {
            return .truncatedBody(url: url, expected: expectedLength ?? 0, received: received)
        }
        return .transport(url: url, message: text)
    }

    /// An HTTP/2 upstream's failure in words a user can act on (NIO prints its errors as Swift values:
    /// "StreamClosed(streamID: HTTP2StreamID(13), errorCode: HTTP2ErrorCode<0x2 Internal Error>, location: …)"); nil for
    /// any other error.
    static func http2Failure(_ error: any Error) -> String? {
        switch error {
        case let stream as NIOHTTP2Errors.StreamError:
            return http2Failure(stream.baseError)
        case let closed as NIOHTTP2Errors.StreamClosed:
            // RFC 9113 §7's names, as a server's log and curl say them.
            let names = ["NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
                         "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
                         "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"]
            let code = closed.errorCode.networkCode
            let name = names.indices.contains(code) ? names[code] : "error code 0x" + String(code, radix: 16)
            return "the HTTP/2 stream of the answer was reset (\(name)) before the answer was complete: the upstream reset it, "
                + "or its answer broke HTTP/2 (a header name in capitals, a connection-specific field, no :status) and Kiosk did"
        case is NIOHTTP2Errors.ContentLengthViolated:
            return "the upstream's HTTP/2 answer has a body of another length than its content-length says"
        case let forbidden as NIOHTTP2Errors.ForbiddenHeaderField:
            return "the upstream's HTTP/2 answer carries \(forbidden.name), a field HTTP/2 forbids (RFC 9113 §8.2.2)"
        case let invalid as NIOHTTP2Errors.InvalidHTTP2HeaderFieldName:
            return "the upstream's HTTP/2 answer has a field name HTTP/2 forbids (\(invalid.fieldName): capitals or other "
                + "characters, RFC 9113 §8.2.1)"
        case is any NIOHTTP2Error:
            // The type's name in words ("MissingPseudoHeader": "missing pseudo header"); its description names NIO's source.
            let words = String(describing: type(of: error)).reduce(into: "") { text, character in
                if character.isUppercase, !text.isEmpty { text += " " }
                text.append(character.lowercased())
            }
            return "the upstream broke HTTP/2 (\(words))"
        default:
            return nil
        }
    }

    /// The largest header section of an answer read (NIO's parser's own limit on its names and values, 80 KB).
    static let maximumAnswerHeadBytes = 80 * 1024

    /// What was wrong with an upstream's answer that NIO's HTTP/1 parser could not read, in words a user can act on
    /// (llhttp's own, "invalid constant string" or "unknown", say where it stopped, not what the server sent).
    static func unreadableAnswer(_ error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow:
            "the upstream's answer has a header section larger than \(maximumAnswerHeadBytes / 1024) KB, more than Kiosk reads"
        case .invalidConstant, .invalidVersion, .invalidStatus:
            "the upstream's answer does not begin with an HTTP/1.x status line (a server speaking another protocol, "
                + "or TLS on a plain http:// port?)"
        case .invalidHeaderToken:
            "the upstream's answer has a header line that is not valid HTTP/1.1 (a control character, a folded line, "
                + "or a bad field name)"
        // (llhttp raises these in a header line and at a chunk's end alike.)
        case .invalidCharactersUsed, .lfExpected, .strictModeAssertion:
            "the upstream's answer has a line that is not valid HTTP/1.1: a header line with a control character, a folded "
                + "line or a bad field name, or a chunk whose data does not end where its size says"
        case .invalidContentLength:
            "the upstream's Content-Length is not a valid length"
        case .unexpectedContentLength:
            "the upstream's answer has more than one Content-Length, or a Content-Length with Transfer-Encoding "
                + "(refused: they could frame the body differently)"
        case .invalidChunkSize:
            "the upstream's chunked body has a chunk whose size line is not valid"
        // llhttp's codes NIO does not name: a Transfer-Encoding beside a Content-Length or not ending in chunked, a
        // line not ended by CRLF.
        case .unknown:
            "the upstream's answer is not valid HTTP/1.1: a line not ended by CRLF, or a Transfer-Encoding with a "
                + "Content-Length (refused: the two could frame the body differently) or not ending in chunked"
        default:
            "the upstream's answer is not valid HTTP/1.1 (the parser stopped at: \(error.debugDescription))"
        }
    }

    /// What a failure to open a connection (or its TLS handshake) to `host` means, for any dialler (this transport, the
    /// proxy's tunnels): offline with the reason (DNS, refused, no route or answer), TLS in words, the open-file limit;
    /// nil for an error that is not about opening the connection.
    package static func connectionFailure(_ error: any Error, url: String, host: String) -> KioskError? {
        if let reason = tlsFailure(error, host: host) { return .transport(url: url, message: reason) }
        if let reason = outOfDescriptors(error) { return .transport(url: url, message: reason) }
        if let connection = error as? NIOConnectionError {
            let codes = connection.connectionErrors.compactMap { ($0.error as? IOError)?.errnoCode }
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return .offline(host: host, reason: .unresolved)
            }
            let reason: KioskError.OfflineReason = if !codes.isEmpty, codes.allSatisfy({ $0 == ECONNREFUSED }) { .refused }
                else if !codes.isEmpty, codes.allSatisfy({ $0 == ETIMEDOUT }) { .noAnswer }
                else { .unreachable }
            return .offline(host: host, reason: reason)
        }
        if let ioError = error as? IOError,
           [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ECONNABORTED, ETIMEDOUT].contains(ioError.errnoCode) {
            return .offline(host: host, reason: ioError.errnoCode == ECONNREFUSED ? .refused : ioError.errnoCode == ETIMEDOUT ? .noAnswer : .unreachable)
        }
        // NIO's own deadline for the connection (or Kiosk's for its TLS handshake): nothing answered, which is not
        // "no route" — a firewall that drops packets, or a host that is down.
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return .offline(host: host, reason: .noAnswer)
        }
        return nil
    }

    /// Why no connection could be opened when the process has every file it may have open (EMFILE) or the system
    /// has (ENFILE): not the upstream's fault, and not "could not connect", which would send the user looking there.
    static func outOfDescriptors(_ error: any Error) -> String? {
        let errors = (error as? NIOConnectionError).map { $0.connectionErrors.map(\.error) } ?? [error]
        let codes = errors.compactMap { ($0 as? IOError)?.errnoCode }
        if codes.contains(ENFILE) {
            return "the system has as many files open as it allows (ENFILE): Kiosk could not open a connection"
        }
        guard codes.contains(EMFILE) else { return nil }
        return "Kiosk has as many connections and files open as it may (its open-file limit, ulimit -n, is \(OpenFileLimit.current)): "
            + "it could not open one more to the upstream"
    }

    /// How `tlsFailure` starts when the certificate did not verify (then `CertificateDiagnosis` may say why).
    static let untrustedCertificate = "the upstream's certificate for "
    /// Whether `message` is `tlsFailure`'s for a chain BoringSSL could not verify (CERTIFICATE_VERIFY_FAILED), which it
    /// says no more of.
    package static func isUnverifiedChain(_ message: String) -> Bool {
        message.hasPrefix(untrustedCertificate) && message.hasSuffix(unverifiedChain)
    }

    /// That failure made precise — expired on a date, not yet valid, or which issuer — by reading the certificate of
    /// `name` at `addresses` over a second handshake that checks nothing (`CertificateDiagnosis`), said of `host`; nil
    /// when `message` is no such failure or the certificate cannot be read. `roots` are the --upstream-ca files.
    package static func diagnosedTrustFailure(_ message: String, host: String, certificateOf name: String,
                                              at addresses: [SocketAddress], trusting roots: [String]) async -> String? {
        guard isUnverifiedChain(message),
              let reason = await CertificateDiagnosis.reason(host: name, dialling: addresses, trusting: roots) else {
            return nil
        }
        return "the upstream's certificate for \(host) is not trusted: \(reason)"
    }

    /// What `tlsFailure` says after the host when BoringSSL found no trusted chain (CERTIFICATE_VERIFY_FAILED), and no more.
    static let unverifiedChain = " is not trusted: it has expired or is not yet valid, or its issuer is not among the trusted roots "
        + "(the system's, and any --upstream-ca)"

    /// The note on an exchange with an HTTPS upstream whose certificate was not checked (`--insecure-upstream`).
    package static func insecureNote(_ endpoint: String) -> ExchangeTouch {
        ExchangeTouch(kind: .insecure, id: 0, name: endpoint, applied: true,
                      detail: "the upstream's certificate was not checked (kiosk proxy --insecure-upstream): "
                          + "anyone on the way could have read or changed this exchange")
    }

    /// Whether a transport failure's message says the upstream could not be trusted (its certificate, or a retired TLS):
    /// an answer stored earlier must not stand in for it, which would hide a certificate gone bad, or an interception,
    /// behind a healthy-looking answer.
    package static func isTrustFailure(_ message: String) -> Bool {
        message.hasPrefix("the upstream's certificate ") || message.contains(retiredTLS)
    }

    /// What `tlsFailure` says of an upstream that speaks no TLS newer than 1.1.
    static let retiredTLS = "speaks only TLS older than 1.2, which Kiosk refuses"

    /// Why a TLS handshake with `host` failed, in words (BoringSSL's own say where in its sources it failed, not why);
    /// nil for an error that is not TLS's.
    package static func tlsFailure(_ error: any Error, host: String) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the upstream's certificate does not name \(host)"
        }
        if error is UnnamedHost {
            return "the upstream's certificate does not name \(host) among its DNS names, which a name is matched against as browsers "
                + "match it (an IP address it names, or a partial wildcard such as api*.example.com, vouches for no name)"
        }
        if let weak = error as? WeakCertificate {
            return untrustedCertificate + "\(host) is too weak to trust: \(weak.reason)"
        }
        return boringSSLDescription(error).map { tlsFailure(described: $0, host: host) }
    }

    /// BoringSSL's description of a TLS error; nil for an error that is not TLS's. TLS 1.3 sends some refusals (a
    /// client certificate asked for) after the handshake: BoringSSL's error, unwrapped.
    private static func boringSSLDescription(_ error: any Error) -> String? {
        if case .handshakeFailed(let cause)? = error as? NIOSSLError { return String(describing: cause) }
        return (error as? BoringSSLError).map { String(describing: $0) }
    }

    /// Why a TLS handshake with `host` failed, from BoringSSL's description of its error.
    static func tlsFailure(described text: String, host: String) -> String {
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return untrustedCertificate + "\(host)" + unverifiedChain
        }
        // "error:…:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /path/file.cc:123" → "WRONG_VERSION_NUMBER": the
        // reason's name, never the path of BoringSSL's source it was raised in.
        let reason = text.components(separatedBy: "OPENSSL_internal:").dropFirst().first?
            .prefix { $0.isLetter || $0.isNumber || $0 == "_" }.description ?? ""
        if let words = tlsReasons.first(where: { reason.contains($0.key) })?.value { return words(host) + " (\(reason))" }
        // Any other refusal of the certificate itself (BAD_ECC_CERT, WRONG_CERTIFICATE_TYPE…) is one too: said so, it is a
        // trust failure, which no stored answer hides.
        if reason.contains("CERT") {
            return untrustedCertificate + "\(host) cannot be used for TLS (\(reason))"
        }
        // NIOSSL's own word for a peer that closed mid-handshake (no BoringSSL reason then).
        if reason.isEmpty, text.contains("EOF during handshake") {
            return "the TLS handshake with \(host) failed: it closed the connection during the handshake (a server that refused "
                + "Kiosk's TLS hello, or no TLS server on that port)"
        }
        return "the TLS handshake with \(host) failed" + (reason.isEmpty ? "" : " (\(reason))")
    }

    /// The TLS every connection Kiosk opens to an upstream speaks: the system's roots and `additionalRoots` (PEM files),
    /// certificates checked unless `verifies` is false, and TLS 1.2 at least — 1.0 and 1.1 are retired (RFC 8996) and
    /// browsers and curl refuse them: an app through Kiosk must not reach an upstream it could not reach directly.
    package static func upstreamTLS(trusting additionalRoots: [String], verifies: Bool) -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv12
        tls.additionalTrustRoots = additionalRoots.map { .file($0) }
        if !verifies { tls.certificateVerification = .none }
        // Closing a connection, Kiosk waits this long for the upstream's close_notify, not NIO's 5 s: a stop with an HTTPS
        // exchange cut short waited it out (10 s in all, past the 5 s grace), and nothing is left to read by then.
        tls.shutdownTimeout = .seconds(1)
        return tls
    }

    /// BoringSSL's reasons a person can act on, in words.
    private static let tlsReasons: KeyValuePairs<String, @Sendable (String) -> String> = [
        "UNSUPPORTED_PROTOCOL": { "\($0) \(retiredTLS) (RFC 8996 retired TLS 1.0 and 1.1)" },
        "PROTOCOL_VERSION": { "\($0) \(retiredTLS) (RFC 8996 retired TLS 1.0 and 1.1)" },
        "WRONG_VERSION_NUMBER": { "\($0) did not answer in TLS on that port (a plain-HTTP server there? then ask for http://)" },
        "CERTIFICATE_REQUIRED": { "\($0) asks for a client certificate, which Kiosk does not send" },
        // The certificate's key usage leaves out what the handshake needs of its key (digitalSignature).
        "KEY_USAGE_BIT_INCORRECT": { "\(untrustedCertificate)\($0) does not allow its key to sign, which TLS needs of it" },
        "HANDSHAKE_FAILURE": { "\($0) and Kiosk have no TLS version or cipher in common" },
        "NO_SHARED_CIPHER": { "\($0) and Kiosk have no TLS version or cipher in common" },
    ]
}
