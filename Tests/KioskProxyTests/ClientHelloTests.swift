import NIOCore
import NIOEmbedded
import NIOSSL
import Testing
@testable import KioskProxy

@Suite("Reading an app's TLS hello for the name and protocols it asks for")
struct ClientHelloTests {
    /// The first flight of a real TLS client (BoringSSL through NIOSSL): one handshake record holding its ClientHello.
    static func realHello(name: String?, alpn: [String]) throws -> [UInt8] {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.applicationProtocols = alpn
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: NIOSSLContext(configuration: tls), serverHostname: name))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 443)).wait()
        var bytes: [UInt8] = []
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        _ = try? channel.finish()
        return bytes
    }

    /// `record`'s handshake bytes re-framed as records of the given fragment sizes (the last takes the rest).
    static func split(_ record: [UInt8], into sizes: [Int]) -> [UInt8] {
        var payload = record.dropFirst(5)
        var out: [UInt8] = []
        for size in sizes + [payload.count] where !payload.isEmpty {
            let fragment = payload.prefix(size)
            payload = payload.dropFirst(fragment.count)
            out += [record[0], record[1], record[2], UInt8(fragment.count >> 8), UInt8(fragment.count & 0xFF)] + fragment
        }
        return out
    }

    static func read(_ bytes: [UInt8]) -> ClientHello.Reading {
        ClientHello.read(ByteBuffer(bytes: bytes).readableBytesView)
    }

    @Test("A real client's hello gives its server name and its ALPN protocols in order")
    func realClient() throws {
        // Given BoringSSL's hello for api.example.test offering h2 and http/1.1
        let hello = try Self.realHello(name: "api.example.test", alpn: ["h2", "http/1.1"])
        // When it is read
        // Then the name and the protocols are the ones asked for, and HTTP/1.1 is among them
        let expected = ClientHello(serverName: "api.example.test", applicationProtocols: ["h2", "http/1.1"])
        #expect(Self.read(hello) == .hello(expected))
        #expect(expected.speaksHTTP1)
    }

    @Test("A hello split across TLS records at any byte reads the same as the whole; every shorter prefix is incomplete")
    func splitAcrossRecords() throws {
        // Given a real hello naming pinned.example.test, offering h2 only
        let record = try Self.realHello(name: "pinned.example.test", alpn: ["h2"])
        let expected = ClientHello.Reading.hello(ClientHello(serverName: "pinned.example.test", applicationProtocols: ["h2"]))
        let length = record.count - 5
        for cut in 1..<length {
            // When its handshake message is re-framed as two records cut at `cut` (and as three at one-third and `cut`)
            let two = Self.split(record, into: [cut])
            #expect(Self.read(two) == expected, "cut at \(cut)")
            if cut > length / 3 {
                #expect(Self.read(Self.split(record, into: [length / 3, cut - length / 3])) == expected, "three, cut at \(cut)")
            }
        }
        // Then, and every prefix of a split hello is only incomplete, never read without its name
        let two = Self.split(record, into: [40])
        for end in 0..<two.count { #expect(Self.read(Array(two.prefix(end))) == .incomplete, "prefix \(end)") }
    }

    @Test("Only h2 offered means the proxy's HTTP/1.1 side cannot read it; no ALPN at all means HTTP/1.1",
          arguments: [(["h2"], false), (["h2", "http/1.1"], true), ([], true), (["http/1.0"], true), (["grpc-exp", "h2"], false)])
    func speaksHTTP1(protocols: [String], speaks: Bool) throws {
        // Given a real hello offering `protocols` (none: the extension is left out)
        let reading = Self.read(try Self.realHello(name: "a.test", alpn: protocols))
        // Then whether it speaks HTTP/1.1 follows from them
        guard case .hello(let hello) = reading else { Issue.record("not read: \(reading)"); return }
        #expect(hello.applicationProtocols == (protocols.isEmpty ? nil : protocols))
        #expect(hello.speaksHTTP1 == speaks)
    }

    @Test("A hello without a server name reads as naming none")
    func noName() throws {
        #expect(Self.read(try Self.realHello(name: nil, alpn: [])) == .hello(ClientHello(serverName: nil, applicationProtocols: nil)))
    }

    @Test("Bytes that are not a handshake record, not a ClientHello, or a hello longer than 64 KB are unreadable, not waited for")
    func unreadable() throws {
        let hello = try Self.realHello(name: "a.test", alpn: [])
        var notHandshake = hello
        notHandshake[0] = 0x17
        var serverHello = hello
        serverHello[5] = 2
        // A handshake message announcing 1 MB, in a first record of 4 bytes.
        let huge: [UInt8] = [0x16, 3, 1, 0, 4, 1, 0x10, 0, 0]
        var zeroRecord = hello
        zeroRecord[3] = 0
        zeroRecord[4] = 0
        // The hello one byte short, its record's and message's lengths saying so: its extensions run past the end.
        let body = Array(hello.dropFirst(5 + 4).dropLast())
        let message = [1, UInt8(body.count >> 16), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
        let truncatedInside = [0x16, 3, 1, UInt8(message.count >> 8), UInt8(message.count & 0xFF)] + message
        for (bytes, what) in [(notHandshake, "application data"), (serverHello, "a ServerHello"), (huge, "1 MB hello"),
                              (zeroRecord, "an empty record"), (truncatedInside, "fields past the end")] {
            #expect(Self.read(bytes) == .unreadable, "\(what)")
        }
    }

    @Test("A name that is not ASCII is left out; the protocols are still read")
    func nonASCIIName() throws {
        // Given a hello whose server name bytes are replaced by one non-ASCII byte in place
        var hello = try Self.realHello(name: "xa.test", alpn: ["h2"])
        let name = Array("xa.test".utf8)
        let at = try #require((0..<(hello.count - name.count)).first { Array(hello[$0..<($0 + name.count)]) == name })
        hello[at] = 0xE9
        // Then it names nothing, and offers h2 only
        #expect(Self.read(hello) == .hello(ClientHello(serverName: nil, applicationProtocols: ["h2"])))
    }
}
