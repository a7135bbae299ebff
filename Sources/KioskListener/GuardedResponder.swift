import HTTPTypes
public import Hummingbird
public import KioskCore
import NIOCore

/// A responder that judges every request by a `ListenerPolicy` before `base` sees it: a request for a name
/// the listener is not served under, or from a peer it does not serve, is answered with the policy's refusal
/// (plain text, never stored, no cookie) and reaches no route, middleware or state.
public struct GuardedResponder<Base: HTTPResponder>: HTTPResponder where Base.Context: RemoteAddressRequestContext {
    /// The listener's names and peers.
    public let policy: ListenerPolicy
    /// What answers the requests that pass.
    public let base: Base

    /// `base` behind `policy`.
    public init(policy: ListenerPolicy, base: Base) {
        self.policy = policy
        self.base = base
    }

    public func respond(to request: Request, context: Base.Context) async throws -> Response {
        if let refusal = policy.refusal(hosts: Self.hosts(of: request), peer: Self.peer(context)) {
            let response = Self.response(refusal)
            return request.method == .head ? response.createHeadResponse() : response
        }
        return try await base.respond(to: request, context: context)
    }

    /// Every Host the request names: HTTP/1 requests carry it as a header, which HTTPTypes moves to `authority`
    /// (the first one; any other stays a field, and is counted so that two Host headers are refused).
    static func hosts(of request: Request) -> [String] {
        (request.head.authority.map { [$0] } ?? []) + request.headers[values: hostField]
    }

    /// The socket's peer as an address; nil without a socket (an in-process test), for a Unix socket, or once
    /// the connection closed (NIO forgets a closed channel's address), which the policy refuses.
    static func peer(_ context: Base.Context) -> IPAddress? {
        context.remoteAddress?.ipAddress.flatMap(IPAddress.init(literal:))
    }

    /// A refusal as plain text that no cache keeps (HEAD gets its headers only).
    static func response(_ refusal: ListenerRefusal) -> Response {
        Response(status: HTTPResponse.Status(code: refusal.status),
                 headers: [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store",
                           contentTypeOptions: "nosniff"],
                 body: ResponseBody(byteBuffer: ByteBuffer(string: refusal.message + "\n")))
    }
}

/// A request context with nothing but Hummingbird's storage and the socket's peer, for listeners whose
/// routes need no more (the demo upstream's).
public struct PeerRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// Who connected.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

private let hostField = HTTPField.Name("Host")!
private let contentTypeOptions = HTTPField.Name("X-Content-Type-Options")!
