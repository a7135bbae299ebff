import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Brotli (RFC 7932) decoding through the system's own decoder, libbrotlidec, loaded when first needed: the library
/// curl and the browsers' packages bring (Debian's libbrotli1), so nothing is built with Kiosk or needs its headers.
/// Where it is missing, a brotli body stays as it came, as before (`isAvailable` false).
enum Brotli {
    // The decoder's C interface (brotli/decode.h): create, decompress a stream, destroy.
    private typealias Create = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> OpaquePointer?
    private typealias DecompressStream = @convention(c) (OpaquePointer?, UnsafeMutablePointer<Int>, UnsafeMutablePointer<UnsafePointer<UInt8>?>,
                                                         UnsafeMutablePointer<Int>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                                                         UnsafeMutablePointer<Int>?) -> Int32
    private typealias Destroy = @convention(c) (OpaquePointer?) -> Void

    /// The library's functions; immutable once loaded.
    private struct Decoder: @unchecked Sendable {
        let create: Create
        let decompress: DecompressStream
        let destroy: Destroy
    }

    // BrotliDecoderResult's values.
    private static let success: Int32 = 1
    private static let needsMoreOutput: Int32 = 3

    private static let decoder: Decoder? = {
        for name in ["libbrotlidec.so.1", "libbrotlidec.so", "libbrotlidec.1.dylib", "libbrotlidec.dylib"] {
            guard let library = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            guard let create = dlsym(library, "BrotliDecoderCreateInstance"),
                  let decompress = dlsym(library, "BrotliDecoderDecompressStream"),
                  let destroy = dlsym(library, "BrotliDecoderDestroyInstance") else {
                dlclose(library)
                continue
            }
            // Kept loaded for the process's life: the functions are called from any thread from now on.
            return Decoder(create: unsafeBitCast(create, to: Create.self), decompress: unsafeBitCast(decompress, to: DecompressStream.self),
                           destroy: unsafeBitCast(destroy, to: Destroy.self))
        }
        return nil
    }()

    /// Whether the system's brotli decoder could be loaded.
    static var isAvailable: Bool { decoder != nil }

    /// `data` decoded, or nil when no decoder is at hand, the stream is corrupt, cut short or followed by other bytes,
    /// or its content would grow past `maximumBytes` (a bomb).
    static func decoded(_ data: Data, maximumBytes: Int) -> Data? {
        guard let decoder, !data.isEmpty, let state = decoder.create(nil, nil, nil) else { return nil }
        defer { decoder.destroy(state) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        return data.withUnsafeBytes { raw -> Data? in
            var nextIn = raw.bindMemory(to: UInt8.self).baseAddress
            var availableIn = raw.count
            while true {
                let result = chunk.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    var nextOut = buffer.baseAddress
                    var availableOut = buffer.count
                    let result = decoder.decompress(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                    output.append(buffer.baseAddress!, count: buffer.count - availableOut)
                    return result
                }
                guard output.count <= maximumBytes else { return nil }
                switch result {
                case success: return availableIn == 0 ? output : nil
                case needsMoreOutput: continue
                default: return nil // an error, or the stream ended before its last block (cut short)
                }
            }
        }
    }
}
