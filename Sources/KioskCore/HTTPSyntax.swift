import Foundation

/// The RFC 9110 grammar Kiosk checks before it keeps a method or a header that came from outside (a HAR
/// file, `kiosk mock add`): a CR or LF kept verbatim would split a header in two wherever the value is
/// written back out, and a NUL or other control character has no business on the wire or on a screen.
public enum HTTPSyntax {
    /// The statuses an answer Kiosk makes or edits may carry (a mock, a rewrite rule, a paused answer's edit): final ones.
    /// A 1xx is no answer (RFC 9110 §15.2): the app would wait on for one that never comes (a 101 switches to a protocol
    /// nobody speaks), and the server's pipeline takes it for the end of the exchange.
    public static let finalStatuses = 200...599

    /// Fields that describe one connection, not the message (RFC 9110 §7.6.1): a proxy removes them both ways, and a
    /// cache keeps none; `Connection` names more, and every `Proxy-*` field goes too (`isHopByHop`): `Proxy-Authorization`
    /// is the proxy's own credential, never the upstream's, and the others speak to or of a proxy on one hop.
    static let hopByHop = ["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade"]

    /// `headers` without the hop-by-hop fields, those their `Connection` names and any `Proxy-*` one, in order; the list
    /// has room for `reserving` more.
    public static func endToEnd(_ headers: some Collection<(name: String, value: String)>, reserving: Int = 0) -> [(name: String, value: String)] {
        // The fields `Connection` names are dropped too (few: most name none beyond `close` or `keep-alive`).
        var named: [String] = []
        for field in headers where HTTPHeaderFields.sameName(field.name, "connection") {
            for token in field.value.split(separator: ",") { named.append(token.trimmingCharacters(in: .whitespaces)) }
        }
        var kept: [(name: String, value: String)] = []
        kept.reserveCapacity(headers.count + reserving)
        // Names compared as ASCII without case, in place: this runs on every field of every proxied request and answer,
        // where a lowercased copy of each name and a set lookup were a fiftieth of the proxy's time.
        for field in headers where !isHopByHop(field.name) && !named.contains(where: { HTTPHeaderFields.sameName($0, field.name) }) {
            kept.append(field)
        }
        return kept
    }

    /// Whether `name` is the transport's to write rather than an answer's to say: the framing (`Content-Length`,
    /// `Transfer-Encoding`) Kiosk writes for the body the app gets, and the hop-by-hop fields it drops on the way. A rule
    /// or edit setting one would be logged as what the app got while the app never saw it.
    public static func isTransportField(_ name: String) -> Bool {
        HTTPHeaderFields.sameName(name, "content-length") || isHopByHop(name)
    }

    /// Whether `name` is one of `hopByHop` or any `Proxy-*` field, in any case.
    static func isHopByHop(_ name: String) -> Bool {
        let prefix = "proxy-".utf8
        let isProxyField = name.utf8.count >= prefix.count
            && zip(name.utf8, prefix).allSatisfy { $0 == $1 || ($0 | 0x20 == $1 && $1 >= UInt8(ascii: "a") && $1 <= UInt8(ascii: "z")) }
        return isProxyField || hopByHop.contains { HTTPHeaderFields.sameName($0, name) }
    }

    /// What keeps a request target from reaching its upstream as written.
    public enum EscapeProblem: Sendable, Hashable {
        /// Escapes in the path that are not UTF-8 text (`%FF`, Latin-1's `%E9`), whose path read decoded (by rules, the
        /// log, Foundation's URL) is nothing: `DELETE /items/%FF` must never be matched, shown or sent as `DELETE /`.
        case pathNotUTF8
    }

    /// Why the path of `target` (absolute or origin form, as `escapingDisallowed` leaves it) would not reach an upstream
    /// as sent; nil when it would. The proxy refuses such a request, and an archive's import skips such an answer: no
    /// app could ask for it.
    public static func escapeProblem(in target: String) -> EscapeProblem? {
        // Nearly every target has no escape at all, and is UTF-8 text as every String is: nothing to check.
        guard target.utf8.contains(UInt8(ascii: "%")) else { return nil }
        let bytes = Array(target.utf8)
        // The path: after the scheme and authority of an absolute-form target, up to the query.
        var start = 0
        if let schemeEnd = schemeEnd(of: target) {
            let afterAuthority = target[schemeEnd...].firstIndex(where: { $0 == "/" || $0 == "?" }) ?? target.endIndex
            start = target.utf8.distance(from: target.startIndex, to: afterAuthority)
        }
        let pathEnd = bytes[start...].firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        var decodedPath: [UInt8] = []
        var index = start
        while index < pathEnd {
            let byte = bytes[index]
            // (A `%` that starts no escape is the character itself.)
            if byte == UInt8(ascii: "%"), index + 2 < pathEnd, let high = Hex.value(of: bytes[index + 1]), let low = Hex.value(of: bytes[index + 2]) {
                decodedPath.append(high << 4 | low)
                index += 3
            } else {
                decodedPath.append(byte)
                index += 1
            }
        }
        return String(validating: decodedPath, as: UTF8.self) == nil ? .pathNotUTF8 : nil
    }

    /// The target with every byte RFC 3986 does not allow after the authority (`[ ] | { } ^ \` " < >`, a space, a control
    /// character, non-ASCII) percent-encoded, and a `%` that starts no escape (`?q=100%`, which browsers send as typed)
    /// written `%25`, and nothing else: Foundation's URL parse, given one such byte, encodes the whole target again, its
    /// valid escapes too (`?ids[]=1&q=a%20b` would reach the upstream as `…q=a%2520b`). A server reads the result as the
    /// app meant it; only a signature over the raw bytes would differ.
    public static func escapingDisallowed(_ target: String) -> String {
        let utf8 = Array(target.utf8)
        // Past the authority of an absolute-form target (an IPv6 host keeps its brackets), else from the start.
        var start = 0
        if let schemeEnd = schemeEnd(of: target) {
            let from = target.utf8.distance(from: target.utf8.startIndex, to: schemeEnd)
            start = utf8[from...].firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
                ?? utf8.endIndex
        }
        func isStrayPercent(at index: Int) -> Bool {
            utf8[index] == UInt8(ascii: "%")
                && !(index + 2 < utf8.count && Hex.value(of: utf8[index + 1]) != nil && Hex.value(of: utf8[index + 2]) != nil)
        }
        guard utf8.indices[start...].contains(where: { !allowedInTarget(utf8[$0]) || isStrayPercent(at: $0) }) else { return target }
        var escaped = Array(utf8[..<start])
        for index in utf8.indices[start...] {
            let byte = utf8[index]
            if allowedInTarget(byte) && !isStrayPercent(at: index) {
                escaped.append(byte)
            } else {
                escaped.append(UInt8(ascii: "%"))
                escaped.append(contentsOf: Hex.encode([byte]).uppercased().utf8)
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Whether RFC 3986 allows the byte in a path or query as it is: unreserved, sub-delims, `: @ / ?`, `%` (an escape's)
    /// and `#` (a fragment, which URL parsing sets apart).
    private static func allowedInTarget(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "-._~!$&'()*+,;=:@/?%#".utf8.contains(byte)
        }
    }

    /// Where the authority of an absolute-form target starts: just past its first `://` (nil when it has none). Read as
    /// bytes: Foundation's `range(of:)` goes through NSString, a measurable part of every proxied request.
    public static func schemeEnd(of target: String) -> String.Index? {
        let utf8 = target.utf8
        var index = utf8.startIndex
        while let colon = utf8[index...].firstIndex(of: UInt8(ascii: ":")) {
            let rest = utf8[utf8.index(after: colon)...]
            if rest.starts(with: "//".utf8) { return utf8.index(colon, offsetBy: 3) }
            index = utf8.index(after: colon)
        }
        return nil
    }


    /// Whether `text` is a `token` (RFC 9110 §5.6.2), the form of methods and field names: one or more
    /// ASCII letters, digits or ``!#$%&'*+-.^_`|~``.
    public static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenCharacter)
    }

    /// Whether `text` is a valid field value (RFC 9110 §5.5): visible ASCII, spaces, horizontal tabs and
    /// `obs-text` (any byte from 0x80, so any UTF-8 beyond ASCII) — never CR, LF, NUL, DEL or another
    /// control character. Whitespace around the value is allowed, since recipients strip it.
    public static func isFieldValue(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
    }

    /// Why `method` and `headers` cannot be written out as they are (a method that is not a token, a
    /// header name that is not one, a value that is not a field value), in words; nil when they can.
    public static func problem(method: String, headers: [RequestRecord.HeaderField]) -> String? {
        guard isToken(method) else {
            return "The method is not an HTTP method (RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only)."
        }
        for (position, header) in headers.enumerated() {
            guard isToken(header.name) else {
                return "Header \(position + 1)'s name is not a valid HTTP header name (RFC 9110 token)."
            }
            guard isFieldValue(header.value) else {
                return "The value of header \(header.name) is not a valid HTTP field value "
                    + "(CR, LF, NUL and other control characters but the tab are not allowed)."
            }
        }
        return nil
    }

    /// Whether `path` is an `absolute-path` (RFC 3986 §3.3, as a request target's path): "/" then segments of
    /// unreserved characters, sub-delims, ":", "@" and "%XX" escapes — so it can stand in a URL as it is.
    public static func isAbsolutePath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else { return false }
                index += 3
                continue
            }
            guard isPathCharacter(byte) else { return false }
            index += 1
        }
        return true
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }

    /// `pchar` but the escape, and "/": what a path holds as it is.
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default:
            pathSymbols.contains(byte)
        }
    }

    /// unreserved's and sub-delims' punctuation, ":", "@" and "/".
    private static let pathSymbols = Set("-._~!$&'()*+,;=:@/".utf8)

    /// The media type of a Content-Type value (`Text/HTML; charset=utf-8` → `text/html`): before its parameters, without
    /// the spaces (OWS) around it, lowercased. Byte by byte: Foundation's trimming bridges to NSString, and every answer's
    /// type is read on the event loop.
    public static func mediaType(_ contentType: some StringProtocol) -> String {
        let bytes = Array(contentType.utf8.prefix { $0 != UInt8(ascii: ";") })
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(decoding: bytes[first...last].map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// A parameter of a field value with parameters (`multipart/form-data; boundary="b0"`, `form-data; name="password"`):
    /// the value of the first one named `name` (any case) after the first `;`, its quotes taken off; nil when none is.
    public static func parameter(_ name: String, in value: some StringProtocol) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name.lowercased() else { continue }
            return pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") && pair[1].count >= 2 ? String(pair[1].dropFirst().dropLast()) : pair[1]
        }
        return nil
    }

    /// `value` (a field such as `text/html; charset=GBK`) with its parameter `name` set to `replacement`, the rest as
    /// written; the parameter is added at the end when `value` has none of that name.
    public static func replacingParameter(_ name: String, in value: String, with replacement: String) -> String {
        var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        for index in parts.indices.dropFirst() {
            let pair = parts[index].split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name.lowercased() else { continue }
            parts[index] = pair[0] + "=" + replacement
            return parts.joined(separator: ";")
        }
        return value + "; " + name + "=" + replacement
    }

    /// `tchar`: the bytes a token is made of.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
            true
        default:
            tokenSymbols.contains(byte)
        }
    }

    /// The punctuation `tchar` allows besides letters and digits.
    private static let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)
}
