import AsyncHTTPClient
import Foundation
public import KioskCore
import Logging
import NIOCore
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

    /// Why the PEM file at `path` cannot be a trust root (unreadable, or no certificate in it), nil when it can.
    public static func trustRootProblem(atPath path: String) -> String? {
        guard FileManager.default.isReadableFile(atPath: path) else { return "\(path) cannot be read" }
        guard let certificates = try? NIOSSLCertificate.fromPEMFile(path), !certificates.isEmpty else {
            return "\(path) holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
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

/// The production `HTTPTransport`, on AsyncHTTPClient. It fails fast when a host refuses connections
/// (no silent connection retries: the offline fallback must not wait), and turns every transport
/// failure into a `KioskError` that says what happened. It follows no redirect: `PolicyTransport`
/// above it follows them, each target checked by the outbound policy.
public final class AsyncHTTPTransport: HTTPTransport {
    /// One client (connection pool) per proxy in use (nil: the direct one) and event loop (see `Pool`), with the set-up
    /// times of its connections; nil once shut down, so a request still running (a background revalidation) cannot
    /// create a client nobody will close.
    private let clients = Mutex<[Pool: (client: HTTPClient, setups: ConnectionSetups)]?>([:])

    /// What a connection pool is kept for: a proxy (nil: direct), and the event loop its connections live on, or none
    /// (the whole group) for a request made off the loops. A request made on an event loop (a proxied one: see KioskProxy's
    /// EventLoopTaskExecutor) gets a pool of that loop's own: AsyncHTTPClient leases an idle connection of any loop
    /// before it opens one on the loop asked for, so with one pool an app's connection on one loop and the upstream's
    /// on the other stayed so, every exchange crossing threads four times (an eventfd wake-up each way, twice).
    private struct Pool: Hashable {
        var proxy: URL?
        var loop: ObjectIdentifier?
    }
    private let configuration: TransportConfiguration

    /// Creates a transport whose connection pools run on the shared event loop group.
    public init(configuration: TransportConfiguration = TransportConfiguration()) {
        self.configuration = configuration
    }

    /// The pool for `proxy` on `loop` (nil: any loop of the shared group), made on first use.
    private func client(proxy: URL?, on loop: (any EventLoop)?) throws(KioskError) -> (client: HTTPClient, setups: ConnectionSetups) {
        let pool = Pool(proxy: proxy, loop: loop.map { ObjectIdentifier($0) })
        return try clients.withLock { clients throws(KioskError) in
            guard let open = clients else { throw KioskError.cancelled }
            if let client = open[pool] { return client }
            var clientConfiguration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                // No read timeout of AsyncHTTPClient's: each exchange's own timer (`ResponseCollector.watch`) ends an
                // answer gone quiet, with one timer an exchange rather than one per part read.
                timeout: .init(connect: Self.timeAmount(configuration.connectTimeout)),
                proxy: proxy.flatMap { url in url.host.map { .server(host: $0, port: url.port ?? 80) } },
                decompression: configuration.passesThrough ? .disabled : .enabled(limit: .ratio(50))
            )
            clientConfiguration.tlsConfiguration = Self.upstreamTLS(trusting: configuration.additionalTrustRoots,
                                                                    verifies: configuration.verifiesCertificates)
            // A refused connection must surface at once so the store answers immediately; retries are
            // the RetryingTransport's decision, made with knowledge of the request.
            clientConfiguration.connectionPool.retryConnectionEstablishment = false
            // A proxy carries an app's parallel requests as the app sends them, not queued behind eight connections.
            if configuration.passesThrough { clientConfiguration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 256 }
            clientConfiguration.httpVersion = .automatic
            // Kiosk reports no distributed traces; AsyncHTTPClient would otherwise start a span (a no-op one, found
            // by a dynamic cast) for every request.
            clientConfiguration.tracing.tracer = nil
            // Every connection and HTTP/2 stream gets the guard against statuses AsyncHTTPClient cannot survive (see
            // `StatusBelow100`), between the parser and the client's own handler.
            clientConfiguration.http1_1ConnectionDebugInitializer = { channel in
                StatusBelow100.guardAnswers(of: channel) { try $0.handler(type: ByteToMessageHandler<HTTPResponseDecoder>.self) }
            }
            clientConfiguration.http2StreamChannelDebugInitializer = { channel in
                StatusBelow100.guardAnswers(of: channel) { try $0.handler(type: HTTP2FramePayloadToHTTP1ClientCodec.self) }
            }
            // The pool's own log statements are the only place AsyncHTTPClient says when a connection is
            // being opened (see ExchangePhases.swift); this logger times them and prints nothing.
            let setups = ConnectionSetups()
            let poolLogger = Logger(label: "kiosk.transport.pool") { _ in
                ConnectionEventProbe(logLevel: .trace) { id, announcesVersion in
                    setups.note(id, announcesVersion: announcesVersion, at: ContinuousClock.now)
                }
            }
            let group: any EventLoopGroup = loop ?? MultiThreadedEventLoopGroup.singleton
            let client = HTTPClient(eventLoopGroupProvider: .shared(group),
                                    configuration: clientConfiguration, backgroundActivityLogger: poolLogger)
            clients?[pool] = (client, setups)
            return (client, setups)
        }
    }

    /// The shared group's loops, which live as long as the process.
    private static let sharedLoops: [any EventLoop] = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())

    /// The loop of the shared group this code runs on, if any. Only those get a pool of their own: a loop of another
    /// group may be shut down, and its identity given to a new one.
    private static func sharedLoop() -> (any EventLoop)? {
        guard let current = MultiThreadedEventLoopGroup.currentEventLoop else { return nil }
        return sharedLoops.first { $0 === current }
    }

    /// Closes the connection pools; call once when the process no longer needs the transport.
    public func shutdown() async {
        let all = clients.withLock { clients in
            defer { clients = nil }
            return clients?.values.map(\.client) ?? []
        }
        for client in all { try? await client.shutdown() }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await exchange(request)
    }

    private func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        var target = request.url
        var connectHost = request.url.host(percentEncoded: false) ?? ""
        var connectPort = request.url.port ?? (request.url.scheme?.lowercased() == "https" ? 443 : 80)
        var hostHeader: String?
        if let origin = Origin(request.url), let override = configuration.connectOverrides[origin],
           var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false) {
            hostHeader = components.port.map { "\(origin.host):\($0)" } ?? origin.host
            components.host = override.host
            components.port = override.port
            target = components.url ?? request.url
            connectHost = override.host
            connectPort = override.port
        }
        let proxy = configuration.proxy.proxy(for: request.url, connectingTo: connectHost, port: connectPort)
        // Made whole in one list (with room for what is added below), not grown field by field.
        var fields: [(String, String)] = []
        fields.reserveCapacity(request.headers.fields.count + 2)
        for field in request.headers { fields.append((field.name, field.value)) }
        var headers = HTTPHeaders(fields)
        if let hostHeader { headers.replaceOrAdd(name: "Host", value: hostHeader) }
        if headers["User-Agent"].isEmpty && !configuration.passesThrough { headers.add(name: "User-Agent", value: "Kiosk/1.0") }

        if !configuration.verifiesCertificates, request.url.scheme?.lowercased() == "https" {
            request.note(ExchangeTouch(kind: .insecure, id: 0, name: request.endpoint, applied: true,
                                       detail: "the upstream's certificate was not checked (kiosk proxy --insecure-upstream): "
                                           + "anyone on the way could have read or changed this exchange"))
        }
        // The delegate API is the one that reports when the request head was written, which splits the
        // wait for a connection from the server's answer (see ExchangePhases.swift).
        // A proxy streams what it cannot hold (an event stream, a body past the limit); Kiosk's own requests never do.
        let streams = configuration.passesThrough
        // An exchange running on an event loop (a proxied one: see KioskProxy's EventLoopTaskExecutor) is answered on
        // that loop, by a pool whose connections are all on it (`Pool`): no thread hop between the app's connection and
        // the upstream's. Requiring the loop of a shared pool (`.delegateAndChannel`) would make it open a short-lived
        // "overflow" connection per request whenever its idle ones are on the other loop.
        let current = Self.sharedLoop()
        let (http, setups) = try client(proxy: proxy, on: current)
        // A request a server let die unanswered on a connection it had kept open goes again, on another connection,
        // when sending it twice is harmless (see `StaleConnection`).
        let replayable = request.bodyStream == nil && StaleConnection.replayableMethods.contains(request.method)
        var attempt = 1
        while true {
            let clock = ContinuousClock()
            let start = clock.now
            let loop = current ?? MultiThreadedEventLoopGroup.singleton.any()
            let ready = loop.makePromise(of: ResponseCollector.Collected.self)
            let collector = ResponseCollector(limit: configuration.maximumBodyBytes, streams: streams, budget: configuration.heldBodies,
                                              url: request.url, ready: ready)
            do {
                return try await send(request, to: target, headers: headers, streams: streams, through: http, setups: setups,
                                      collector: collector, ready: ready, on: loop, start: start)
            } catch {
                if !(error is CancellationError), replayable, attempt < StaleConnection.maxAttempts,
                   StaleConnection.diedUnanswered(collector.failure ?? error, marks: collector.marks, setups: setups, since: start) {
                    attempt += 1
                    continue
                }
                throw await failure(error, collector: collector, host: request.url.host ?? collector.url, proxy: proxy,
                                    connectHost: connectHost, connectPort: connectPort)
            }
        }
    }

    /// One try of `request` on a connection of `http`'s pool: the answer, or AsyncHTTPClient's error as it came.
    private func send(_ request: HTTPRequest, to target: URL, headers: HTTPHeaders, streams: Bool, through http: HTTPClient,
                      setups: ConnectionSetups, collector: ResponseCollector, ready: EventLoopPromise<ResponseCollector.Collected>,
                      on loop: any EventLoop, start: ContinuousClock.Instant) async throws -> HTTPResponse {
        let clock = ContinuousClock()
        // The URL is put in words (redacted) only for an error: every request comes through here.
        let url = request.url
        let logger = Logger(label: "kiosk.transport.request") { _ in
            ConnectionEventProbe(logLevel: .debug) { [collector] id, _ in collector.noteConnection(id) }
        }
        do {
            // The URL itself (absolute): given as a string, AsyncHTTPClient would parse it again for every request.
            let outgoing = try HTTPClient.Request(url: target.absoluteURL, method: HTTPMethod(rawValue: request.method),
                                                  headers: headers, body: Self.body(of: request, on: loop))
            // `send`'s timer bounds the wait for the answer; a streamed body may then last as long as data keeps coming
            // (the exchange's timer ends one gone quiet: `ResponseCollector.watch`), so a stream has no deadline.
            let timeout = min(request.timeout ?? configuration.requestTimeout, configuration.requestTimeout)
            let task = http.execute(request: outgoing, delegate: collector,
                                    deadline: streams ? nil : .now() + Self.timeAmount(timeout), logger: logger)
            // AsyncHTTPClient's deadline covers the body, but a request still waiting for a connection fails only when
            // the pool gets to it (RequestBag+StateMachine.swift:623-629): this timer reports the timeout on time
            // whatever the pool is doing. It bounds the wait for the answer — for a proxy's (`streams`), for its head:
            // the body, held or streamed, may then take as long as data keeps coming, until none came for the
            // transport's timeout, as it would without the proxy in between.
            collector.watch(timeout: Self.timeAmount(timeout), idle: Self.timeAmount(configuration.requestTimeout), on: loop) {
                collector.deliver(.failure(KioskError.timeout(url: url.redactedString, seconds: timeout.seconds)))
                task.cancel()
            }
            task.futureResult.whenComplete { result in
                collector.endWatch()
                if case .failure(let error) = result { collector.noteFailure(error) }
                // An answer ended by the connection's closing, over TLS without close_notify (Python's ssl servers, many
                // embedded ones): AsyncHTTPClient refuses it, since a cut cannot be told from the end; browsers and curl
                // take it, and so does Kiosk, saying so on the exchange.
                if case .failure(let error) = result, (error as? NIOSSLError) == .uncleanShutdown,
                   let answer = collector.closeDelimitedAnswer() {
                    request.note(ExchangeTouch(kind: .uncleanEnd, id: 0, name: request.endpoint, detail: "the upstream closed its TLS "
                        + "connection without close_notify to end this answer, which declared no length: its end was taken as the "
                        + "body's, though a cut there could not be told apart"))
                    return collector.deliver(.success(answer))
                }
                // A stream cut short ends with the same words as an answer that never came.
                collector.deliver(result.mapError { error -> any Error in
                    error is KioskError ? error : Self.classify(error, url: url.redactedString, host: url.host ?? url.redactedString, expectedLength: collector.expectedLength,
                                                                received: collector.received, timeout: timeout)
                })
            }
            let response = try await withTaskCancellationHandler {
                try await ready.futureResult.get()
            } onCancel: {
                task.cancel()
            }
            // Made whole in one list (with room for what the layers above add: Cache-Status, Age), not grown field by field.
            var list: [(name: String, value: String)] = []
            list.reserveCapacity(response.head.headers.count + 2)
            for header in response.head.headers { list.append((name: header.name, value: header.value)) }
            let fields = HTTPHeaderFields(list)
            let setup = response.marks.connectionID.flatMap(setups.setup(of:))
            let timings = RequestTimings(start: start, marks: response.marks, setup: setup, end: clock.now)
            var answer = HTTPResponse(status: Int(response.head.status.code), headers: fields,
                                      body: response.body, url: request.url, timings: timings)
            answer.stream = response.stream
            return answer
        } catch is CancellationError {
            throw KioskError.cancelled
        }
    }

    /// What a failed exchange is to its caller: `error` in the words of `classify`, an untrusted certificate's told apart.
    private func failure(_ error: any Error, collector: ResponseCollector, host: String, proxy: URL?,
                         connectHost: String, connectPort: Int) async -> KioskError {
        let redacted = collector.url
        let classified = error as? KioskError
            ?? Self.classify(error, url: redacted, host: host, expectedLength: collector.expectedLength,
                             received: collector.received, timeout: configuration.requestTimeout)
        // An untrusted certificate: which of expired, not yet valid or unknown issuer, read from the certificate
        // itself (not through an HTTP proxy, which would have to be asked for a tunnel first).
        if case .transport(_, let message) = classified, message.hasPrefix(Self.untrustedCertificate), proxy == nil,
           let reason = await CertificateDiagnosis.reason(host: connectHost, port: connectPort) {
            return KioskError.transport(url: redacted, message: "the upstream's certificate for \(host) is not trusted: \(reason)")
        }
        return classified
    }

    /// What AsyncHTTPClient sends as the request's body: its bytes, or a streamed upload written part by part, each once
    /// the one before was written (the app's side is held back meanwhile), with the app's declared length if it gave
    /// one (else chunked). An upload that ends early, or a request that ends before its upload, stops the other side.
    private static func body(of request: HTTPRequest, on loop: any EventLoop) -> HTTPClient.Body? {
        guard let stream = request.bodyStream else { return request.body.map { .bytes($0) } }
        let declared = request.headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        return .stream(contentLength: declared) { writer in
            let written = loop.makePromise(of: Void.self)
            written.completeWithTask {
                do {
                    while let chunk = try await stream.next() {
                        try await writer.write(.byteBuffer(ByteBuffer(bytes: chunk))).get()
                    }
                } catch {
                    stream.cancel()
                    throw error
                }
            }
            return written.futureResult
        }
    }

    /// Maps AsyncHTTPClient/NIO errors onto the few cases a user can act on.
    static func classify(_ error: any Error, url: String, host: String, expectedLength: Int?, received: Int,
                         timeout: Duration) -> KioskError {
        let seconds = timeout.seconds
        if let status = error as? StatusBelow100 {
            return .transport(url: url, message: "the upstream answered with the status \(status.shown), which is not an HTTP "
                + "status (they start at 100)")
        }
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout, .tlsHandshakeTimeout:
                return .offline(host: host)
            case .getConnectionFromPoolTimeout:
                // Waiting for one of the pool's connections (a proxy holds up to 256 to a host), not for the host: it may
                // well be up, every connection busy with a slow answer.
                return .transport(url: url, message: "no connection to \(host) came free in time: Kiosk's connections to it were all "
                                  + "busy (a proxy keeps up to 256 to one host), or a new one could not be opened")
            case .readTimeout, .deadlineExceeded, .writeTimeout:
                return .timeout(url: url, seconds: seconds)
            case .cancelled, .requestStreamCancelled:
                return .cancelled
            case .remoteConnectionClosed, .uncleanShutdown, .bodyLengthMismatch:
                if let expectedLength, received < expectedLength {
                    return .truncatedBody(url: url, expected: expectedLength, received: received)
                }
                return .transport(url: url, message: "the connection closed before the response was complete")
            default:
                return .transport(url: url, message: "\(clientError)")
            }
        }
        if let failure = connectionFailure(error, url: url, host: host) { return failure }
        // The body's coding, undone as it came, went wrong: said so, not as a body cut short (which it also is).
        if let decompression = error as? NIOHTTPDecompression.DecompressionError {
            return .transport(url: url, message: decompression == .limit
                ? "the answer's content coding (gzip, deflate) expands to more than 50 times its size, as a decompression bomb does; refused"
                : "the answer's content coding (gzip, deflate) is corrupt: it cannot be decoded")
        }
        if let expectedLength, received < expectedLength {
            return .truncatedBody(url: url, expected: expectedLength, received: received)
        }
        if let parserError = error as? HTTPParserError, parserError != .invalidEOFState {
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

    /// What was wrong with an upstream's answer that NIO's HTTP/1 parser could not read, in words a user can act on
    /// (llhttp's own, "invalid constant string" or "unknown", say where it stopped, not what the server sent).
    static func unreadableAnswer(_ error: HTTPParserError) -> String {
        switch error {
        case .headerOverflow:
            "the upstream's answer has a header section larger than 80 KB, more than Kiosk reads"
        case .invalidConstant, .invalidVersion, .invalidStatus:
            "the upstream's answer does not begin with an HTTP/1.x status line (a server speaking another protocol, "
                + "or TLS on a plain http:// port?)"
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected, .strictModeAssertion:
            "the upstream's answer has a header line that is not valid HTTP/1.1 (a control character, a folded line, "
                + "or a bad field name)"
        case .invalidContentLength:
            "the upstream's Content-Length is not a valid length"
        case .unexpectedContentLength:
            "the upstream's answer has two different Content-Lengths, or a Content-Length with Transfer-Encoding "
                + "(refused: the two could frame the body differently)"
        case .invalidChunkSize:
            "the upstream's chunked body has a chunk whose size line is not valid"
        // llhttp's codes NIO does not name: a Transfer-Encoding beside a Content-Length or not ending in chunked, a
        // line not ended by CRLF.
        case .unknown:
            "the upstream's answer is not valid HTTP/1.1: a Transfer-Encoding with a Content-Length (refused: the two "
                + "could frame the body differently) or not ending in chunked, or a line not ended by CRLF"
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
            return .offline(host: host, reason: !codes.isEmpty && codes.allSatisfy { $0 == ECONNREFUSED } ? .refused : .unreachable)
        }
        if let ioError = error as? IOError,
           [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ECONNABORTED, ETIMEDOUT].contains(ioError.errnoCode) {
            return .offline(host: host, reason: ioError.errnoCode == ECONNREFUSED ? .refused : .unreachable)
        }
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return .offline(host: host)
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
    static func tlsFailure(_ error: any Error, host: String) -> String? {
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the upstream's certificate does not name \(host)"
        }
        let text: String
        // TLS 1.3 sends some refusals (a client certificate asked for) after the handshake: BoringSSL's error, unwrapped.
        if case .handshakeFailed(let cause)? = error as? NIOSSLError {
            text = String(describing: cause)
        } else if let boringSSL = error as? BoringSSLError {
            text = String(describing: boringSSL)
        } else {
            return nil
        }
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return untrustedCertificate + "\(host) is not trusted: it has expired or is not yet valid, or its issuer is not "
                + "among the trusted roots (the system's, and any --upstream-ca)"
        }
        // "error:…:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /path/file.cc:123" → "WRONG_VERSION_NUMBER": the
        // reason's name, never the path of BoringSSL's source it was raised in.
        let reason = text.components(separatedBy: "OPENSSL_internal:").dropFirst().first?
            .prefix { $0.isLetter || $0.isNumber || $0 == "_" }.description ?? ""
        if let words = tlsReasons.first(where: { reason.contains($0.key) })?.value { return words(host) + " (\(reason))" }
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
        return tls
    }

    /// BoringSSL's reasons a person can act on, in words.
    private static let tlsReasons: KeyValuePairs<String, @Sendable (String) -> String> = [
        "UNSUPPORTED_PROTOCOL": { "\($0) \(retiredTLS) (RFC 8996 retired TLS 1.0 and 1.1)" },
        "PROTOCOL_VERSION": { "\($0) \(retiredTLS) (RFC 8996 retired TLS 1.0 and 1.1)" },
        "WRONG_VERSION_NUMBER": { "\($0) did not answer in TLS on that port (a plain-HTTP server there? then ask for http://)" },
        "CERTIFICATE_REQUIRED": { "\($0) asks for a client certificate, which Kiosk does not send" },
        "HANDSHAKE_FAILURE": { "\($0) and Kiosk have no TLS version or cipher in common" },
        "NO_SHARED_CIPHER": { "\($0) and Kiosk have no TLS version or cipher in common" },
    ]

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
