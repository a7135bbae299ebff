import Foundation

// What the full-text index reads for a record's bodies: each distinct word once.
//
// Why: FTS5's cost grows with the tokens it hashes, not with the terms it keeps, and a JSON body
// repeats its keys and the parts of its URLs hundreds of times (an 18 KB Rick and Morty page is
// about 3,500 tokens but 200 distinct words). The index is `detail=none`: it records only which
// rows contain a term, never where or how often, so indexing each distinct word once builds exactly
// the index the whole body would, for a quarter of the work. The text is stored with the record
// (`logBody.searchText`), so that FTS5 reads back the very text it indexed when a record is evicted.
//
// Why the words are exactly the body's: the text is cut only at ASCII bytes that are not letters or
// digits, which the index's unicode61 tokenizer always treats as separators; so each piece holds
// whole tokens (a piece may still hold several, split at non-ASCII separators, which the tokenizer
// finds in the piece as it would in the body), and two pieces equal but for ASCII case make the
// same tokens. UTF-8 never uses an ASCII byte inside a character, so every piece is valid UTF-8.

extension RequestLog {
    /// The text indexed for these bodies (each the indexed UTF-8 prefix of one): their distinct
    /// words in order of first appearance, ASCII-lowercased and space-separated; nil when there is none.
    static func searchText(of bodies: [Data]) -> String? {
        let capacity = bodies.reduce(0) { $0 + $1.count } + bodies.count
        guard capacity > bodies.count else { return nil }
        var words = DistinctWords(capacity: capacity)
        for body in bodies where !body.isEmpty {
            body.withUnsafeBytes { words.add(contentsOf: $0) }
        }
        return words.text
    }
}

/// Collects the distinct words of byte strings (see RequestLog+SearchText.swift) in one pass: each
/// word is copied lowercased to the end of the output while it is hashed, then kept (the output
/// grows past it) only if an open-addressing table of the words kept so far has no equal one.
/// Unsafe buffers: this runs on every captured body, and bounds checks would double its cost.
struct DistinctWords: ~Copyable {
    /// The output: distinct words separated by single spaces; `length` bytes are kept.
    private let output: UnsafeMutableBufferPointer<UInt8>
    private var length = 0
    /// Per slot, 0 when empty, else the kept word's start in `output` (high 32 bits) and its length.
    private var slots: UnsafeMutableBufferPointer<UInt64>
    /// Per slot, the kept word's hash, compared before its bytes.
    private var hashes: UnsafeMutableBufferPointer<UInt32>
    private var count = 0

    /// Room for `capacity` bytes of words and separators: the sum of the inputs' sizes, plus one per input.
    init(capacity: Int) {
        output = .allocate(capacity: max(1, capacity))
        slots = .allocate(capacity: 1024)
        slots.initialize(repeating: 0)
        hashes = .allocate(capacity: 1024)
        hashes.initialize(repeating: 0)
    }

    deinit {
        output.deallocate()
        slots.deallocate()
        hashes.deallocate()
    }

    /// The words collected so far, or nil for none.
    var text: String? {
        length == 0 ? nil : String(decoding: UnsafeBufferPointer(rebasing: output[..<length]), as: UTF8.self)
    }

    /// Adds the words of `bytes` not seen yet.
    mutating func add(contentsOf bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let out = output.baseAddress else { return }
        let count = bytes.count
        var index = 0
        wordFolding.withUnsafeBufferPointer { fold in
            let fold = fold.baseAddress!
            while index < count {
                while index < count, fold[Int(base[index])] == 0 { index += 1 }
                guard index < count else { break }
                // Copy the word, lowercased, after a separating space, hashing it (FNV-1a) on the way.
                let start = length == 0 ? 0 : length + 1
                var end = start
                var hash: UInt32 = 0x811c_9dc5
                while index < count {
                    let lowered = fold[Int(base[index])]
                    if lowered == 0 { break }
                    out[end] = lowered
                    hash = (hash ^ UInt32(lowered)) &* 0x0100_0193
                    end += 1
                    index += 1
                }
                keep(start: start, end: end, hash: hash)
            }
        }
    }

    /// Keeps the word just copied to `start..<end` unless an equal one was kept before.
    private mutating func keep(start: Int, end: Int, hash: UInt32) {
        let wordLength = end - start
        let out = output.baseAddress!
        var mask = slots.count - 1
        var slot = Int(hash) & mask
        while slots[slot] != 0 {
            if hashes[slot] == hash, Int(slots[slot] & 0xFFFF_FFFF) == wordLength,
               Self.equal(out + Int(slots[slot] >> 32), out + start, wordLength) { return }
            slot = (slot + 1) & mask
        }
        if start > 0 { out[length] = 0x20 }
        length = end
        slots[slot] = UInt64(start) << 32 | UInt64(wordLength)
        hashes[slot] = hash
        count += 1
        // At half full, double: probes stay short.
        guard count * 2 > slots.count else { return }
        let (oldSlots, oldHashes) = (slots, hashes)
        slots = .allocate(capacity: oldSlots.count * 2)
        slots.initialize(repeating: 0)
        hashes = .allocate(capacity: oldSlots.count * 2)
        hashes.initialize(repeating: 0)
        mask = slots.count - 1
        for old in 0..<oldSlots.count where oldSlots[old] != 0 {
            var slot = Int(oldHashes[old]) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = oldSlots[old]
            hashes[slot] = oldHashes[old]
        }
        oldSlots.deallocate()
        oldHashes.deallocate()
    }

    /// Whether `count` bytes at `a` and `b` are equal: inline for the short words that make most
    /// of a body, where calling memcmp costs more than comparing.
    @inline(__always)
    private static func equal(_ a: UnsafeMutablePointer<UInt8>, _ b: UnsafeMutablePointer<UInt8>, _ count: Int) -> Bool {
        if count > 16 { return memcmp(a, b, count) == 0 }
        for index in 0..<count where a[index] != b[index] { return false }
        return true
    }
}

/// Per byte, 0 for an ASCII byte other than a letter or digit (always a separator for unicode61),
/// else the byte with ASCII letters lowercased.
private let wordFolding: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
    switch byte {
    case 0x41...0x5A: return UInt8(byte | 0x20)
    case 0x30...0x39, 0x61...0x7A, 0x80...0xFF: return UInt8(byte)
    default: return 0
    }
}
