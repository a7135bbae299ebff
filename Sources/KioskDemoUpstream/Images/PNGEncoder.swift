/// A minimal PNG encoder for palette images.
///
/// The module cannot link zlib (no package changes), so it writes DEFLATE itself: one block with the
/// fixed Huffman code and an LZ77 pass that only tries two distances — 1 (a run of one colour) and
/// one row back (a row equal to the row above). Generated pictures are flat colour areas, so those two
/// cases are nearly all the redundancy there is and a few hundred bytes per image result.
enum PNGEncoder {
    /// Encodes `indices` (one palette index per pixel, row by row) as an 8-bit indexed-colour PNG.
    static func encode(width: Int, height: Int, palette: [RGB], indices: [UInt8]) -> [UInt8] {
        precondition(width > 0 && height > 0 && indices.count == width * height)
        precondition(!palette.isEmpty && palette.count <= 256)

        // Scanlines: filter byte 0 (None) then the row's indices.
        let rowLength = width + 1
        var raw = [UInt8](repeating: 0, count: rowLength * height)
        for row in 0..<height {
            let start = row * rowLength
            for column in 0..<width { raw[start + 1 + column] = indices[row * width + column] }
        }

        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header.appendBigEndian(UInt32(width))
        header.appendBigEndian(UInt32(height))
        header.append(contentsOf: [8, 3, 0, 0, 0]) // bit depth 8, colour type 3 (palette), deflate, no filter set, no interlace
        appendChunk("IHDR", header, to: &png)
        appendChunk("PLTE", palette.flatMap { [$0.red, $0.green, $0.blue] }, to: &png)
        appendChunk("IDAT", zlibCompress(raw, rowLength: rowLength), to: &png)
        appendChunk("IEND", [], to: &png)
        return png
    }

    private static func appendChunk(_ type: String, _ data: [UInt8], to png: inout [UInt8]) {
        let typeBytes = Array(type.utf8)
        png.appendBigEndian(UInt32(data.count))
        png.append(contentsOf: typeBytes)
        png.append(contentsOf: data)
        png.appendBigEndian(CRC32.checksum(typeBytes + data))
    }

    /// A zlib stream (RFC 1950) around one fixed-Huffman DEFLATE block (RFC 1951).
    static func zlibCompress(_ data: [UInt8], rowLength: Int) -> [UInt8] {
        var writer = BitWriter()
        writer.write(bits: 1, count: 1) // BFINAL
        writer.write(bits: 1, count: 2) // BTYPE = 01, fixed Huffman

        let count = data.count
        data.withUnsafeBufferPointer { bytes in
            // The longest match (up to DEFLATE's 258) of the bytes at `position` with those `distance` back.
            func matchLength(at position: Int, distance: Int) -> Int {
                guard distance <= position, distance <= 32_768 else { return 0 }
                var length = 0
                let limit = Swift.min(258, count - position)
                while length < limit, bytes[position + length] == bytes[position + length - distance] { length += 1 }
                return length
            }
            var position = 0
            while position < count {
                let run = matchLength(at: position, distance: 1)
                let above = run == 258 ? 0 : matchLength(at: position, distance: rowLength)
                let (length, distance) = above > run ? (above, rowLength) : (run, 1)
                if length >= 3 {
                    writer.writeLength(length)
                    writer.writeDistance(distance)
                    position += length
                } else {
                    writer.writeLiteral(Int(bytes[position]))
                    position += 1
                }
            }
        }
        writer.writeLiteral(256) // end of block

        var out: [UInt8] = [0x78, 0x01] // deflate, 32 KiB window, no dictionary, fastest level
        out.append(contentsOf: writer.finish())
        out.appendBigEndian(Adler32.checksum(data))
        return out
    }
}

/// A palette colour.
struct RGB: Sendable, Hashable {
    var red: UInt8
    var green: UInt8
    var blue: UInt8
}

/// Writes DEFLATE's bit stream: values least-significant bit first, Huffman codes most-significant first.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var buffer: UInt64 = 0
    private var bitCount = 0

    mutating func write(bits: Int, count: Int) {
        buffer |= UInt64(bits) << UInt64(bitCount)
        bitCount += count
        while bitCount >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            bitCount -= 8
        }
    }

    /// Writes a literal byte, the end-of-block or a length symbol with the fixed code.
    mutating func writeLiteral(_ symbol: Int) {
        let code = Self.fixedLiteralCodes[symbol]
        write(bits: Int(code.bits), count: Int(code.length))
    }

    /// The fixed literal/length code (RFC 1951 3.2.6), bit-reversed once here because DEFLATE
    /// stores Huffman codes starting from their top bit.
    private static let fixedLiteralCodes: [(bits: UInt16, length: UInt8)] = (0..<288).map { symbol in
        let (code, length): (Int, Int) = switch symbol {
        case 0...143: (0x30 + symbol, 8)
        case 144...255: (0x190 + symbol - 144, 9)
        case 256...279: (symbol - 256, 7)
        default: (0xC0 + symbol - 280, 8)
        }
        return (UInt16(reverse(code, length: length)), UInt8(length))
    }

    private static func reverse(_ code: Int, length: Int) -> Int {
        var reversed = 0
        for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
        return reversed
    }

    mutating func writeLength(_ length: Int) {
        var index = Self.lengthBases.count - 1
        while Self.lengthBases[index] > length { index -= 1 }
        writeLiteral(257 + index)
        let extra = Self.lengthExtraBits[index]
        if extra > 0 { write(bits: length - Self.lengthBases[index], count: extra) }
    }

    mutating func writeDistance(_ distance: Int) {
        var index = Self.distanceBases.count - 1
        while Self.distanceBases[index] > distance { index -= 1 }
        write(bits: Self.reverse(index, length: 5), count: 5)
        let extra = Self.distanceExtraBits[index]
        if extra > 0 { write(bits: distance - Self.distanceBases[index], count: extra) }
    }

    mutating func finish() -> [UInt8] {
        if bitCount > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        buffer = 0
        bitCount = 0
        return bytes
    }

    private static let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtraBits = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                          3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBases = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                        257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                        8193, 12289, 16385, 24577]
    private static let distanceExtraBits = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                            7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
}

/// CRC-32 as PNG chunks use it (ISO 3309, polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// Adler-32, the zlib trailer checksum of the uncompressed data.
enum Adler32 {
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        // 5552 is the largest block after which the sums still fit in 32 bits before the modulo.
        var index = 0
        while index < bytes.count {
            let end = min(index + 5552, bytes.count)
            while index < end {
                a += UInt32(bytes[index])
                b += a
                index += 1
            }
            a %= 65_521
            b %= 65_521
        }
        return (b << 16) | a
    }
}

extension [UInt8] {
    mutating func appendBigEndian(_ value: UInt32) {
        append(UInt8(truncatingIfNeeded: value >> 24))
        append(UInt8(truncatingIfNeeded: value >> 16))
        append(UInt8(truncatingIfNeeded: value >> 8))
        append(UInt8(truncatingIfNeeded: value))
    }
}
