import AsyncHTTPClient
import Foundation
import KioskCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// Timeouts and limits for the real HTTP transport.
public struct TransportConfiguration: Sendable, Hashable {
    /// How long to wait for a TCP connection before calling the upstream unreachable.
    public var connectTimeout: Duration
    /// How long a whole request may take, from sending to the last body byte.
    public var requestTimeout: Duration
    /// Bodies larger than this are refused (protects memory from a misbehaving upstream).
    public var maximumBodyBytes: Int

    /// 5 s to connect, 15 s per request, 32 MiB per body.
    public init(connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(15),
                maximumBodyBytes: Int = 32 << 20) {
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.maximumBodyBytes = maximumBodyBytes
    }
}

/// The production `HTTPTransport`, on AsyncHTTPClient. It fails fast when a host refuses connections
/// (no silent connection retries: the offline fallback must not wait), and turns every transport
/// failure into a `KioskError` that says what happened.
public final class AsyncHTTPTransport: HTTPTransport {
    private let client: HTTPClient
    private let configuration: TransportConfiguration

    /// Creates a transport with its own connection pool on the shared event loop group.
    public init(configuration: TransportConfiguration = TransportConfiguration()) {
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 5, allowCycles: false),
            timeout: .init(connect: Self.timeAmount(configuration.connectTimeout),
                           read: Self.timeAmount(configuration.requestTimeout)),
            decompression: .enabled(limit: .ratio(50))
        )
        // A refused connection must surface at once so the store answers immediately; retries are
        // the RetryingTransport's decision, made with knowledge of the request.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        clientConfiguration.httpVersion = .automatic
        self.client = HTTPClient(eventLoopGroupProvider: .shared(MultiThreadedEventLoopGroup.singleton),
                                 configuration: clientConfiguration)
        self.configuration = configuration
    }

    /// Closes the connection pool; call once when the process no longer needs the transport.
    public func shutdown() async {
        try? await client.shutdown()
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // AsyncHTTPClient's deadline ends when the response head arrives; a body that trickles in
        // must still end within the request timeout, so the whole exchange races a timer.
        let timeout = configuration.requestTimeout
        let url = request.url.redactedString
        return try await withThrowingTaskGroup(of: HTTPResponse?.self) { group in
            group.addTask { try await self.exchange(request) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else {
                throw KioskError.timeout(url: url, seconds: Self.seconds(timeout))
            }
            return response
        }
    }

    private func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        if outgoing.headers["User-Agent"].isEmpty { outgoing.headers.add(name: "User-Agent", value: "Kiosk/1.0") }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }

        let redacted = request.url.redactedString
        let host = request.url.host ?? redacted
        var expectedLength: Int?
        var received = 0
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await client.execute(outgoing, timeout: Self.timeAmount(configuration.requestTimeout))
            let head = clock.now
            expectedLength = response.headers.first(name: "content-length").flatMap(Int.init)
            var body = ByteBuffer()
            for try await var chunk in response.body {
                received += chunk.readableBytes
                guard received <= configuration.maximumBodyBytes else {
                    throw KioskError.transport(url: redacted,
                                               message: "response larger than \(configuration.maximumBodyBytes) bytes")
                }
                body.writeBuffer(&chunk)
            }
            var headers = HTTPHeaderFields()
            for header in response.headers { headers.add(name: header.name, value: header.value) }
            let end = clock.now
            // AsyncHTTPClient does not report connection set-up separately, so it is part of firstByte.
            let timings = RequestTimings(firstByte: Self.seconds(head - start), download: Self.seconds(end - head),
                                         total: Self.seconds(end - start))
            return HTTPResponse(status: Int(response.status.code), headers: headers,
                                body: Data(body.readableBytesView), url: response.url ?? request.url, timings: timings)
        } catch let error as KioskError {
            throw error
        } catch is CancellationError {
            throw KioskError.cancelled
        } catch {
            throw Self.classify(error, url: redacted, host: host, expectedLength: expectedLength, received: received,
                                timeout: configuration.requestTimeout)
        }
    }

    /// Maps AsyncHTTPClient/NIO errors onto the few cases a user can act on.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func classify(_ error: any Error, url: String, host: String, expectedLength: Int?, received: Int,
                         timeout: Duration) -> KioskError {
        let seconds = seconds(timeout)
        if let clientError = error as? HTTPClientError {
            switch clientError {
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return .offline(host: host)
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
        if error is NIOConnectionError { return .offline(host: host) }
        if let ioError = error as? IOError,
           [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, ECONNABORTED, ETIMEDOUT].contains(ioError.errnoCode) {
            return .offline(host: host)
        }
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return .offline(host: host)
        }
        if let expectedLength, received < expectedLength {
            return .truncatedBody(url: url, expected: expectedLength, received: received)
        }
        let text = String(describing: error)
        if text.contains("invalidEOFState") || text.contains("EOF") {
            return .truncatedBody(url: url, expected: expectedLength ?? 0, received: received)
        }
        return .transport(url: url, message: text)
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
