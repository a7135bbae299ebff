import CompressNIO
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import NIOCore
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
        let hash = MarvelSignature.hash(timestamp: timestamp, privateKey: keys.marvelPrivate, publicKey: keys.marvelPublic)
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

/// Reads a PNG the way a strict decoder would: signature, chunk CRCs, IHDR, and the zlib stream inflated by
/// zlib itself (through compress-nio), which checks its Adler-32, and which must end exactly where the image
/// does — so a broken encoder cannot pass on its header alone.
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
        // Each row is a filter byte and its samples: width * bits per pixel, rounded up to whole bytes.
        let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)] ?? 1
        let rowBytes = (width * channels * Int(header[8]) + 7) / 8
        pixels = try Self.inflateZlib(compressed, expectedSize: height * (1 + rowBytes))
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// Inflates a zlib stream with zlib, which refuses a bad header or block and checks the Adler-32 trailer;
    /// the stream must hold exactly `expectedSize` bytes and end (trailer included) within `stream`.
    static func inflateZlib(_ stream: [UInt8], expectedSize: Int) throws -> [UInt8] {
        let decompressor = try ZlibDecompressor(algorithm: .zlib)
        var input = ByteBuffer(bytes: stream)
        var output = ByteBufferAllocator().buffer(capacity: expectedSize + 64)
        do {
            try decompressor.inflate(from: &input, to: &output)
        } catch let error as CompressNIOError {
            throw Failure.zlib(error == .bufferOverflow ? "more than \(expectedSize) bytes" : error.description)
        }
        guard output.readableBytes == expectedSize else {
            throw Failure.zlib("\(output.readableBytes) bytes inflated, \(expectedSize) expected")
        }
        // A stream that has ended takes no more input; one cut short (its trailer missing) takes this byte.
        var probe = ByteBuffer(bytes: [0])
        var spare = ByteBufferAllocator().buffer(capacity: 16)
        do {
            try decompressor.inflate(from: &probe, to: &spare)
        } catch let error as CompressNIOError {
            throw Failure.zlib("the stream does not end: \(error)")
        }
        guard input.readableBytes == 0, probe.readableBytes == 1, spare.readableBytes == 0 else {
            throw Failure.zlib("the stream does not end where the image data does")
        }
        return Array(output.readableBytesView)
    }
}
