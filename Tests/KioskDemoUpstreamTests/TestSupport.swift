import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KioskCore
import KioskDemoUpstream
import Testing

/// A response as a plain client sees it.
struct FetchedResponse {
    let status: Int
    let response: HTTPURLResponse
    let body: Data

    func header(_ name: String) -> String? { response.value(forHTTPHeaderField: name) }

    /// The body parsed as JSON; fails the test when it is not JSON.
    func json() throws -> Any { try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) }

    func object() throws -> [String: Any] { try #require(try json() as? [String: Any]) }
}

/// A plain URLSession client with no cache, so conditional requests and status codes are seen as sent.
enum Client {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = 15
        return URLSession(configuration: configuration)
    }()

    static func get(_ url: URL, headers: [String: String] = [:]) async throws -> FetchedResponse {
        try await send(url, method: "GET", headers: headers)
    }

    static func send(_ url: URL, method: String, body: Data? = nil, headers: [String: String] = [:]) async throws -> FetchedResponse {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return FetchedResponse(status: http.statusCode, response: http, body: data)
    }
}

/// A started demo upstream with its addresses read once, so tests can build URLs synchronously.
struct RunningDemo: Sendable {
    let upstream: DemoUpstream
    let baseURL: URL
    let controlURL: URL
    let dogsURL: URL
    let keys: DemoUpstreamKeys

    init(_ upstream: DemoUpstream) async {
        self.upstream = upstream
        baseURL = await upstream.baseURL
        controlURL = await upstream.controlURL
        dogsURL = await upstream.dogsURL
        keys = await upstream.keys
    }

    /// A URL under the API listener, e.g. `url("/api/character", [("page", "2")])`.
    func url(_ path: String, _ query: [(String, String)] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        components.path = path
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        return components.url!
    }

    func nytURL(_ path: String, key: String? = nil) -> URL {
        url("/svc/mostpopular/v2/\(path)", [("api-key", key ?? keys.nyt)])
    }

    /// A signed Marvel URL: ts, apikey and hash added as a client must.
    func marvelURL(_ path: String, _ query: [(String, String)] = []) -> URL {
        let timestamp = String(Int(Date().timeIntervalSince1970 * 1000))
        let hash = MD5.hex(timestamp + keys.marvelPrivate + keys.marvelPublic)
        return url("/v1/public/\(path)", query + [("ts", timestamp), ("apikey", keys.marvelPublic), ("hash", hash)])
    }

    func controlURL(_ path: String) -> URL { controlURL.appendingPathComponent(path) }

    func setFaults(_ faults: FaultSettings) async throws { try await upstream.setFaults(faults) }
    func faults() async -> FaultSettings { await upstream.faults }
    func requestCount(pathPrefix: String) async -> Int { await upstream.requestCount(pathPrefix: pathPrefix) }
    func resetRequestCounts() async { await upstream.resetRequestCounts() }
}

/// Runs `body` against a freshly started demo upstream and always stops it.
func withUpstream<T>(_ configuration: DemoUpstreamConfiguration = .init(),
                     _ body: (RunningDemo) async throws -> T) async throws -> T {
    let upstream = DemoUpstream(configuration: configuration)
    try await upstream.start()
    do {
        let result = try await body(await RunningDemo(upstream))
        await upstream.stop()
        return result
    } catch {
        await upstream.stop()
        throw error
    }
}

/// An independent MD5 (RFC 1321), so the tests do not check the server's signature with its own code.
enum MD5 {
    static func hex(_ text: String) -> String {
        var message = Array(text.utf8)
        let bitLength = UInt64(message.count) * 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for shift in stride(from: 0, to: 64, by: 8) { message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        let s: [UInt32] = [7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                           5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
                           4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                           6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21]
        let k: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }
        var a0: UInt32 = 0x6745_2301, b0: UInt32 = 0xEFCD_AB89, c0: UInt32 = 0x98BA_DCFE, d0: UInt32 = 0x1032_5476
        for chunk in stride(from: 0, to: message.count, by: 64) {
            let m: [UInt32] = (0..<16).map { index in
                let offset = chunk + index * 4
                return UInt32(message[offset]) | UInt32(message[offset + 1]) << 8
                    | UInt32(message[offset + 2]) << 16 | UInt32(message[offset + 3]) << 24
            }
            var a = a0, b = b0, c = c0, d = d0
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ k[i] &+ m[g]
                a = d
                d = c
                c = b
                b = b &+ (f << s[i] | f >> (32 - s[i]))
            }
            a0 = a0 &+ a; b0 = b0 &+ b; c0 = c0 &+ c; d0 = d0 &+ d
        }
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32($0 * 8)) } }
            .map { String(format: "%02x", $0) }.joined()
    }
}

/// Reads a PNG the way a strict decoder would: signature, chunk CRCs, IHDR, and the zlib stream
/// inflated and checked against its Adler-32, so a broken encoder cannot pass on its header alone.
struct DecodedPNG {
    let width: Int
    let height: Int
    let colorType: UInt8
    let paletteCount: Int
    let pixels: [UInt8]

    enum Failure: Error { case signature, crc(String), missing(String), zlib(String) }

    init(_ data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) else { throw Failure.signature }
        func u32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
        var offset = 8
        var header: [UInt8]?
        var palette: [UInt8] = []
        var compressed: [UInt8] = []
        var sawEnd = false
        while offset + 12 <= bytes.count {
            let length = u32(offset)
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let data = Array(bytes[(offset + 8)..<(offset + 8 + length)])
            let crc = u32(offset + 8 + length)
            guard crc == Int(Self.crc32(Array(bytes[(offset + 4)..<(offset + 8 + length)]))) else { throw Failure.crc(type) }
            switch type {
            case "IHDR": header = data
            case "PLTE": palette = data
            case "IDAT": compressed += data
            case "IEND": sawEnd = true
            default: break
            }
            offset += 12 + length
        }
        guard let header, sawEnd else { throw Failure.missing("IHDR or IEND") }
        width = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        height = Int(header[4]) << 24 | Int(header[5]) << 16 | Int(header[6]) << 8 | Int(header[7])
        colorType = header[9]
        paletteCount = palette.count / 3
        pixels = try Self.inflateZlib(compressed)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// Inflates stored and fixed-Huffman blocks (all a flat-colour encoder needs) and checks Adler-32.
    static func inflateZlib(_ stream: [UInt8]) throws -> [UInt8] {
        guard stream.count > 6, (Int(stream[0]) << 8 | Int(stream[1])) % 31 == 0, stream[0] & 0x0F == 8 else {
            throw Failure.zlib("bad header")
        }
        var position = 16 // bit position after the 2-byte header
        func bit() throws -> Int {
            guard position / 8 < stream.count else { throw Failure.zlib("ran out of data") }
            defer { position += 1 }
            return Int(stream[position / 8] >> UInt8(position % 8)) & 1
        }
        func bits(_ count: Int) throws -> Int {
            var value = 0
            for index in 0..<count { value |= try bit() << index }
            return value
        }
        func huffman(_ count: Int) throws -> Int {
            var value = 0
            for _ in 0..<count { value = value << 1 | (try bit()) }
            return value
        }
        let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
        let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
        let distanceBases = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
        let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

        var out: [UInt8] = []
        var last = false
        while !last {
            last = try bit() == 1
            switch try bits(2) {
            case 0:
                position = (position + 7) / 8 * 8
                let length = try bits(16)
                _ = try bits(16)
                for _ in 0..<length { out.append(UInt8(try bits(8))) }
            case 1:
                while true {
                    var code = try huffman(7)
                    let symbol: Int
                    if code <= 0b0010111 {
                        symbol = 256 + code
                    } else {
                        code = code << 1 | (try bit())
                        if (0x30...0xBF).contains(code) {
                            symbol = code - 0x30
                        } else if (0xC0...0xC7).contains(code) {
                            symbol = 280 + code - 0xC0
                        } else {
                            code = code << 1 | (try bit())
                            symbol = 144 + code - 0x190
                        }
                    }
                    if symbol < 256 {
                        out.append(UInt8(symbol))
                    } else if symbol == 256 {
                        break
                    } else {
                        let index = symbol - 257
                        let length = lengthBases[index] + (try bits(lengthExtra[index]))
                        let distanceCode = try huffman(5)
                        let distance = distanceBases[distanceCode] + (try bits(distanceExtra[distanceCode]))
                        guard distance <= out.count else { throw Failure.zlib("distance too far back") }
                        for _ in 0..<length { out.append(out[out.count - distance]) }
                    }
                }
            default:
                throw Failure.zlib("unsupported block type")
            }
        }
        position = (position + 7) / 8 * 8
        let trailer = try (0..<4).map { _ in try bits(8) }
        let expected = UInt32(trailer[0]) << 24 | UInt32(trailer[1]) << 16 | UInt32(trailer[2]) << 8 | UInt32(trailer[3])
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in out {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        guard b << 16 | a == expected else { throw Failure.zlib("Adler-32 mismatch") }
        return out
    }
}
