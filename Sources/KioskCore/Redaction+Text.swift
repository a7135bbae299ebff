import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Secrets a body carries in its text rather than under a secret's JSON field or a form's: addresses it holds or echoes
// with a key in their query (`{"next": "https://api.example/?api_key=…"}`, an echoed `/echo?token=…`), a text form
// (`token=…` sent as text/plain), and JSON Web Tokens under any name.
extension Redactor {
    /// Whether a body of this (lowercased) `Content-Type` is data that may carry a secret written out: JSON, a form, plain
    /// text, an event stream, or a body that says nothing of its type. Not an HTML page or a script, whose own code
    /// (`this.token=e`, `app.js?ts=…`) reads the same and must stay as it is, nor a picture's or an archive's bytes.
    static func readsAsText(_ type: String) -> Bool {
        type.isEmpty || type.contains("json") || type.hasPrefix("text/plain") || type.hasPrefix("text/event-stream")
            || type.hasPrefix("application/x-www-form-urlencoded")
    }

    /// The values of the secret pairs `body`'s text spells out (`token=…` sent as plain text), to hide wherever else they
    /// appear; those of fewer than 6 characters are left out, as `hiding` leaves them.
    func secretPairValues(in body: Data) -> [String] {
        body.withUnsafeBytes { raw -> [String] in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, !raw.isEmpty else { return [] }
            let bytes = UnsafeBufferPointer(start: base, count: raw.count)
            return pairValues(in: bytes).map { String(decoding: bytes[$0], as: UTF8.self) }.filter { $0.count >= 6 }
        }
    }

    /// `body` with the secrets its text spells out replaced by the placeholder (`textSecretRanges`); the body itself when
    /// it holds none.
    func redactingTextSecrets(_ body: Data) -> Data {
        Self.replacing(textSecretRanges(in: body), in: body) ?? body
    }

    /// Where the secrets `body`'s text spells out are, in order and apart: the value of each `name=value` pair whose name
    /// is a secret query item's and which starts the body or a JSON string, or follows `?`, `&`, `#` or `;` (an address's
    /// query or fragment, a form; also after `\u0026`, Go's JSON for `&`), however short; and each JSON Web Token
    /// (`eyJ….eyJ….…`).
    func textSecretRanges(in body: Data) -> [Range<Int>] {
        body.withUnsafeBytes { raw -> [Range<Int>] in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, !raw.isEmpty else { return [] }
            let bytes = UnsafeBufferPointer(start: base, count: raw.count)
            return Self.merged(pairValues(in: bytes) + Self.webTokens(in: bytes))
        }
    }

    /// The values of the secret pairs (see `textSecretRanges`), found from each `=` (memchr: a JSON body has few).
    private func pairValues(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        guard let base = bytes.baseAddress else { return [] }
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset < bytes.count, let hit = memchr(base + offset, Int32(UInt8(ascii: "=")), bytes.count - offset) {
            let equals = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            offset = equals + 1
            // The name: the characters a query item's name is written with, at most 64 of them, back from the `=`.
            var start = equals
            while start > 0, equals - start < 64, Self.isNameByte(bytes[start - 1]) { start -= 1 }
            guard start < equals else { continue }
            var nameStart = start
            let before: UInt8? = start > 0 ? bytes[start - 1] : nil
            if before == UInt8(ascii: "\\"), equals - start > 5,
               String(decoding: bytes[start..<(start + 5)], as: UTF8.self).lowercased() == "u0026" {
                nameStart += 5
            } else if let before, !Self.pairStarts.contains(before) {
                continue
            }
            let name = String(decoding: bytes[nameStart..<equals], as: UTF8.self)
            guard namesSecret(Substring(name)) else { continue }
            var end = equals + 1
            while end < bytes.count, !Self.valueEnds.contains(bytes[end]) { end += 1 }
            // (A value hidden already starts with the placeholder's `<`, which ends it here: empty.)
            guard end > equals + 1 else { continue }
            ranges.append((equals + 1)..<end)
            offset = end
        }
        return ranges
    }

    /// Each JSON Web Token in `bytes` (RFC 7519 in its compact form: a header and a claims set, each base64url JSON and so
    /// starting `eyJ`, and a signature, joined by dots), whole.
    private static func webTokens(in bytes: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        guard let base = bytes.baseAddress, bytes.count >= 32 else { return [] }
        var ranges: [Range<Int>] = []
        let lead: [UInt8] = Array("eyJ".utf8)
        func isLead(at index: Int) -> Bool {
            index >= 0 && index + 3 <= bytes.count && bytes[index] == lead[0] && bytes[index + 1] == lead[1] && bytes[index + 2] == lead[2]
        }
        func segmentEnd(from index: Int) -> Int {
            var end = index
            while end < bytes.count, isBase64URL(bytes[end]) { end += 1 }
            return end
        }
        // Found by their `J` (memchr: rare in text), then read from the `ey` before it.
        var offset = 2
        while offset < bytes.count, let hit = memchr(base + offset, Int32(UInt8(ascii: "J")), bytes.count - offset) {
            let first: Int = base.distance(to: hit.assumingMemoryBound(to: UInt8.self)) - 2
            offset = first + 3
            guard isLead(at: first), first == 0 || !isBase64URL(bytes[first - 1]) else { continue }
            let headerEnd = segmentEnd(from: first)
            guard headerEnd - first >= 10, headerEnd < bytes.count, bytes[headerEnd] == UInt8(ascii: "."),
                  isLead(at: headerEnd + 1) else { continue }
            let claimsEnd = segmentEnd(from: headerEnd + 1)
            guard claimsEnd - headerEnd > 4, claimsEnd < bytes.count, bytes[claimsEnd] == UInt8(ascii: ".") else { continue }
            // An unsigned token (`alg: none`) ends at its second dot: still a bearer's claims.
            let signatureEnd = segmentEnd(from: claimsEnd + 1)
            ranges.append(first..<signatureEnd)
            offset = max(offset, signatureEnd)
        }
        return ranges
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }

    /// A byte of a query item's name as written: letters, digits, `_ -`, `%` (an escape), `+` and `[ ]` (a form's array).
    /// Not `.`, which joins a script's names (`this.token=`), never a query item's.
    private static func isNameByte(_ byte: UInt8) -> Bool {
        isBase64URL(byte) || byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
    }

    /// What a pair follows in an address or a form, or a JSON string (a form as a string's value: `"token=…"`).
    private static let pairStarts: Set<UInt8> = [UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "#"), UInt8(ascii: ";"), UInt8(ascii: "\"")]
    /// What ends a pair's value in an address, a form, a JSON string or text. (Not `;`: a value may hold one, and what
    /// follows it is hidden with it rather than a secret's tail shown.)
    private static let valueEnds: Set<UInt8> = Set("&#\"'<>\\, \t\r\n)]}".utf8)
}
