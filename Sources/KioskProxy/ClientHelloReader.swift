import NIOCore

/// What an app's TLS ClientHello asks for, as far as the proxy must know before it answers: the server name (SNI)
/// and the application protocols it offers (ALPN), read from the hello's bytes without a TLS stack.
struct ClientHello: Equatable, Sendable {
    /// The first `host_name` of the server_name extension (RFC 6066 §3) as sent, or nil when the hello names none.
    var serverName: String?
    /// The protocols of the ALPN extension (RFC 7301 §3.1) in the app's order, or nil when it has none.
    var applicationProtocols: [String]?

    /// Whether the app can speak HTTP/1.1 inside TLS: it offers `http/1.1`, or offers no protocol at all (then HTTP/1.1
    /// is what it speaks). An app offering only `h2` (gRPC, some HTTP/2-only clients) cannot be read by the proxy's
    /// HTTP/1.1 side, and would fail its handshake or its first request.
    var speaksHTTP1: Bool {
        guard let applicationProtocols, !applicationProtocols.isEmpty else { return true }
        return applicationProtocols.contains("http/1.1") || applicationProtocols.contains("http/1.0")
    }

    /// What a buffer's bytes hold so far.
    enum Reading: Equatable {
        /// Too few bytes for the whole hello yet.
        case incomplete
        /// The hello, read whole.
        case hello(ClientHello)
        /// Not a well-formed ClientHello (or one larger than `maximumLength`): read as one that names nothing.
        case unreadable
    }

    /// The largest ClientHello read (its handshake message's length). A hello with post-quantum key shares is about
    /// 2 KB; TLS allows 16 MB, which no app sends, and which the proxy would hold before answering.
    static let maximumLength = 64 << 10

    /// Reads the ClientHello at the start of `bytes`: TLS records of the handshake type (RFC 8446 §5.1), whose
    /// fragments are joined — a hello may be split across records, not only across TCP segments — until the handshake
    /// message (§4) is whole, then the hello's fields up to its extensions.
    static func read(_ bytes: ByteBufferView) -> Reading {
        var records = bytes[...]
        var message: [UInt8] = []
        var needed: Int?
        while needed.map({ message.count < $0 }) ?? true {
            guard records.count >= 5 else { return .incomplete }
            let header = Array(records.prefix(5))
            // A handshake record of TLS 1.0–1.3's record layer (whose version field says 3.x).
            guard header[0] == 0x16, header[1] == 3 else { return .unreadable }
            let length = Int(header[3]) << 8 | Int(header[4])
            // RFC 8446 §5.1: a record's length is at most 2^14; a handshake fragment is never empty.
            guard length > 0, length <= 1 << 14 else { return .unreadable }
            guard records.count >= 5 + length else { return .incomplete }
            message.append(contentsOf: records.dropFirst(5).prefix(length))
            records = records.dropFirst(5 + length)
            if needed == nil, message.count >= 4 {
                // The first message must be a ClientHello (type 1); its 24-bit length follows.
                guard message[0] == 1 else { return .unreadable }
                let length = Int(message[1]) << 16 | Int(message[2]) << 8 | Int(message[3])
                guard length <= maximumLength else { return .unreadable }
                needed = 4 + length
            }
        }
        guard let needed else { return .unreadable }
        return parse(message[4..<needed]).map(Reading.hello) ?? .unreadable
    }

    /// The body of a ClientHello message (RFC 8446 §4.1.2; TLS 1.0–1.2's has the same layout), or nil if malformed.
    private static func parse(_ body: ArraySlice<UInt8>) -> ClientHello? {
        var reader = Reader(bytes: body)
        guard reader.skip(2 + 32),                      // legacy_version, random
              reader.skipVector(lengthBytes: 1),        // legacy_session_id
              reader.skipVector(lengthBytes: 2),        // cipher_suites
              reader.skipVector(lengthBytes: 1) else { return nil }  // legacy_compression_methods
        var hello = ClientHello()
        // A hello without extensions (SSL 3.0-era clients) names nothing and offers no protocol.
        if reader.isAtEnd { return hello }
        guard var extensions = reader.vector(lengthBytes: 2), reader.isAtEnd else { return nil }
        while !extensions.isAtEnd {
            guard let type = extensions.integer(bytes: 2), var data = extensions.vector(lengthBytes: 2) else { return nil }
            switch type {
            case 0:  // server_name: a list of (name_type, opaque name); host_name is type 0.
                guard hello.serverName == nil, var names = data.vector(lengthBytes: 2), data.isAtEnd else { return nil }
                while !names.isAtEnd {
                    guard let nameType = names.integer(bytes: 1), let name = names.vector(lengthBytes: 2) else { return nil }
                    if nameType == 0, hello.serverName == nil {
                        // Host names are ASCII (RFC 6066 §3); anything else names nothing the proxy could use.
                        if name.bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) {
                            hello.serverName = String(decoding: name.bytes, as: UTF8.self)
                        }
                    }
                }
            case 16:  // application_layer_protocol_negotiation: a list of non-empty 8-bit-length names.
                guard hello.applicationProtocols == nil, var names = data.vector(lengthBytes: 2), data.isAtEnd else { return nil }
                var protocols: [String] = []
                while !names.isAtEnd {
                    guard let name = names.vector(lengthBytes: 1), !name.bytes.isEmpty else { return nil }
                    protocols.append(String(decoding: name.bytes, as: UTF8.self))
                }
                hello.applicationProtocols = protocols
            default:
                break
            }
        }
        return hello
    }

    /// Reads big-endian integers and length-prefixed vectors, refusing to read past its bytes.
    private struct Reader {
        var bytes: ArraySlice<UInt8>
        var isAtEnd: Bool { bytes.isEmpty }

        mutating func skip(_ count: Int) -> Bool {
            guard bytes.count >= count else { return false }
            bytes = bytes.dropFirst(count)
            return true
        }

        mutating func integer(bytes count: Int) -> Int? {
            guard bytes.count >= count else { return nil }
            let value = bytes.prefix(count).reduce(0) { $0 << 8 | Int($1) }
            bytes = bytes.dropFirst(count)
            return value
        }

        mutating func vector(lengthBytes: Int) -> Reader? {
            guard let length = integer(bytes: lengthBytes), bytes.count >= length else { return nil }
            defer { bytes = bytes.dropFirst(length) }
            return Reader(bytes: bytes.prefix(length))
        }

        mutating func skipVector(lengthBytes: Int) -> Bool {
            vector(lengthBytes: lengthBytes) != nil
        }
    }
}

/// Holds what an app sends inside an intercepted CONNECT until its ClientHello is whole, then calls `decided` with
/// it (nil when the bytes are not a hello it can read) and, once the future `decided` returns completes (the
/// handlers that read the connection are in place), hands on every byte it held, unchanged, and leaves.
final class ClientHelloReader: ByteToMessageDecoder {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    var cumulationBuffer: ByteBuffer?
    private let decided: (ClientHello?) -> EventLoopFuture<Void>
    private var waiting = false

    init(decided: @escaping (ClientHello?) -> EventLoopFuture<Void>) {
        self.decided = decided
    }

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) -> DecodingState {
        // Once decided, everything is held until the handlers after this one are in place.
        guard !waiting else { return .needMoreData }
        switch ClientHello.read(buffer.readableBytesView) {
        case .incomplete: return .needMoreData
        case .hello(let hello): finish(hello, context: context)
        case .unreadable: finish(nil, context: context)
        }
        return .needMoreData
    }

    func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        context.fireChannelRead(NIOAny(buffer))
        buffer.moveReaderIndex(to: buffer.writerIndex)
        return .needMoreData
    }

    /// Removing this handler hands the bytes it holds to the next one (`ByteToMessageHandler` delivers its buffer).
    private func finish(_ hello: ClientHello?, context: ChannelHandlerContext) {
        waiting = true
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        decided(hello).hop(to: context.eventLoop).whenSuccess {
            let context = bound.value
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}

@available(*, unavailable)
extension ClientHelloReader: Sendable {}
