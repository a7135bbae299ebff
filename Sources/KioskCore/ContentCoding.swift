import CompressNIO
public import Foundation
import NIOCore

/// Undoing an HTTP content coding (RFC 9110 §8.4.1) for what keeps bodies decoded: gzip (and x-gzip) and deflate,
/// which zlib knows, and brotli (br), which the system's libbrotlidec knows where it is installed (`Brotli`).
public enum ContentCoding {
    /// The most a decoded body may grow to by default: a body that would inflate further (a bomb) stays as it came.
    public static let maximumDecodedBytes = 64 << 20

    /// The most of a decoded body a page, a terminal or a HAR file is given, as the capture keeps at most this much of a
    /// body sent uncoded: a 64 KB gzip answer of 66 MB made a 198 MB console page and a 410 MB HAR entry.
    public static let shownDecodedBytes = 1 << 20

    /// Whether `coding` (lower-cased, one coding) is one Kiosk can decode.
    public static func decodes(_ coding: String) -> Bool {
        ["gzip", "x-gzip", "deflate"].contains(coding) || (coding == "br" && Brotli.isAvailable)
    }

    /// `data` decoded from `coding`, or nil when Kiosk cannot decode it, it is corrupt or cut short, or it would grow
    /// past `maximumBytes`. "deflate" is zlib's format (RFC 9110 §8.4.1.2), or a raw deflate stream, which some
    /// servers send instead and browsers, curl and mitmproxy read as well.
    public static func decoded(_ data: Data, coding: String, maximumBytes: Int = maximumDecodedBytes) -> Data? {
        guard coding == "deflate" else { return decodedAsLabelled(data, coding: coding, maximumBytes: maximumBytes) }
        return decodedAsLabelled(data, coding: coding, maximumBytes: maximumBytes) ?? rawDeflate(data, maximumBytes: maximumBytes)
    }

    /// A raw deflate stream decoded, or nil when it is not one, is cut short or would grow past `maximumDecodedBytes`. It
    /// has no trailer to tell its end by: one byte put after it is left unread by zlib only when the stream ended just
    /// before it (a stream cut short reads it as more of itself, or fails on it).
    private static func rawDeflate(_ data: Data, maximumBytes: Int) -> Data? {
        var buffer = ByteBuffer(bytes: data + [0])
        guard !data.isEmpty, let inflated = try? buffer.decompress(with: .deflate(), maxSize: maximumBytes),
              buffer.readableBytes == 1 else { return nil }
        return Data(inflated.readableBytesView)
    }

    private static func decodedAsLabelled(_ data: Data, coding: String, maximumBytes: Int) -> Data? {
        let algorithm: CompressionAlgorithm
        switch coding {
        case "gzip", "x-gzip": algorithm = .gzip()
        case "deflate": algorithm = .zlib()
        case "br": return Brotli.decoded(data, maximumBytes: maximumBytes)
        default: return nil
        }
        var buffer = ByteBuffer(bytes: data)
        guard let inflated = try? buffer.decompress(with: algorithm, maxSize: maximumBytes), buffer.readableBytes == 0 else {
            return nil
        }
        let decoded = Data(inflated.readableBytesView)
        // zlib stops without a word at the end of what it was given: a stream cut short must be told by its trailer
        // (gzip's length modulo 2^32, little-endian; zlib's Adler-32 of the content, big-endian).
        guard data.count >= 4 else { return nil }
        let trailer = data.suffix(4).map(UInt32.init)
        if algorithm.description == "gzip" {
            let length = trailer[0] | trailer[1] << 8 | trailer[2] << 16 | trailer[3] << 24
            return length == UInt32(truncatingIfNeeded: decoded.count) ? decoded : nil
        }
        let checksum = trailer[0] << 24 | trailer[1] << 16 | trailer[2] << 8 | trailer[3]
        return checksum == adler32(decoded) ? decoded : nil
    }

    /// Whether `data` begins as a body in `coding` does (gzip's magic bytes, zlib's header; brotli has no mark, so any
    /// body may be one). One that does not may still be coded otherwise (raw deflate carries no header).
    public static func carries(_ data: Data, coding: String) -> Bool {
        let bytes = data.prefix(2).map(UInt16.init)
        switch coding {
        case "gzip", "x-gzip": return bytes == [0x1F, 0x8B]
        case "deflate": return bytes.count == 2 && bytes[0] & 0x0F == 8 && (bytes[0] << 8 | bytes[1]) % 31 == 0
        default: return true
        }
    }

    /// `data` coded in `coding` (gzip, x-gzip or deflate, which zlib writes), or nil for a coding Kiosk cannot write
    /// (brotli: the system has its decoder only).
    public static func encoded(_ data: Data, coding: String) -> Data? {
        let algorithm: CompressionAlgorithm
        switch coding {
        case "gzip", "x-gzip": algorithm = .gzip()
        case "deflate": algorithm = .zlib()
        default: return nil
        }
        var buffer = ByteBuffer(bytes: data)
        guard let compressed = try? buffer.compress(with: algorithm) else { return nil }
        return Data(compressed.readableBytesView)
    }

    /// Whether a request's `Accept-Encoding` (`field`) takes `coding` (lower-cased): named, or `*`, with a weight above 0
    /// (RFC 9110 §12.5.3; `x-gzip` is `gzip`). A request without the field takes none here: RFC 9110 lets any coding go
    /// to it, but a client that sends none (curl, a script) reads what it gets as it is, as servers know.
    public static func accepts(_ coding: String, in field: String?) -> Bool {
        guard let field else { return false }
        let wanted = coding == "x-gzip" ? "gzip" : coding
        var named: Bool?, any: Bool?
        for member in field.split(separator: ",") {
            let parts = member.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            let weight = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            let taken = weight > 0
            switch name == "x-gzip" ? "gzip" : name {
            case wanted: named = taken
            case "*": any = taken
            default: break
            }
        }
        return named ?? any ?? false
    }

    /// The one coding a `Content-Encoding` field names, lower-cased; nil for none or `identity`. A list of several
    /// (`gzip, br`) is returned as it is, which no coding is, so that `decodes` and `decoded` refuse it.
    public static func single(_ field: String?) -> String? {
        guard let coding = field?.trimmingCharacters(in: .whitespaces).lowercased(), !coding.isEmpty, coding != "identity" else { return nil }
        return coding
    }

    /// RFC 1950's Adler-32 checksum.
    private static func adler32(_ data: Data) -> UInt32 {
        var a: UInt32 = 1, b: UInt32 = 0
        // 5552 bytes is the most that can be summed before the sums must be reduced (zlib's NMAX).
        var index = data.startIndex
        while index < data.endIndex {
            let end = data.index(index, offsetBy: min(5552, data.endIndex - index))
            for byte in data[index..<end] {
                a &+= UInt32(byte)
                b &+= a
            }
            a %= 65521
            b %= 65521
            index = end
        }
        return b << 16 | a
    }
}

extension CapturedBody {
    /// The body as its content, as DevTools shows one: decoded from `contentEncoding` (the answer's field) when it was
    /// kept whole as sent in a coding Kiosk undoes, with that coding; else itself, and no coding. The console's request
    /// page and `kiosk log show` read a body through this. Of a decoded body the first `ContentCoding.shownDecodedBytes`
    /// are kept, the rest marked cut as the capture marks it.
    public func decoded(contentEncoding: String?) -> (body: CapturedBody, coding: String?) {
        guard let coding = ContentCoding.single(contentEncoding), !isTruncated, ContentCoding.decodes(coding),
              let data = ContentCoding.decoded(data, coding: coding) else { return (self, nil) }
        return (CapturedBody(capturing: data, limit: ContentCoding.shownDecodedBytes), coding)
    }
}
