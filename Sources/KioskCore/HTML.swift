package import Foundation

/// A fragment of HTML that is safe to emit. The only ways to make one escape their text or take tag
/// and attribute names as static literals, so no view can put a raw upstream string into a page.
package struct HTML: Sendable, ExpressibleByStringLiteral {
    /// The markup, ready to write to a response.
    package let rendered: String

    private init(trusted: String) { rendered = trusted }

    /// A string literal in view code is text, escaped like any other.
    package init(stringLiteral value: String) { rendered = HTML.escape(value) }

    /// Escaped text: & < > " ' can never open a tag, end an attribute or start an entity.
    package static func text(_ value: String) -> HTML { HTML(trusted: escape(value)) }

    /// Markup written in the source code itself (a doctype): a StaticString cannot come from upstream.
    package static func literal(_ markup: StaticString) -> HTML { HTML(trusted: markup.description) }

    /// Fragments one after the other.
    package static func group(_ parts: [HTML]) -> HTML { HTML(trusted: parts.map(\.rendered).joined()) }

    /// Nothing.
    package static let empty = HTML(trusted: "")

    /// `<name attributes>children</name>`; nil attributes (refused URLs) are left out.
    package static func element(_ name: StaticString, _ attributes: [Attribute?] = [], _ children: [HTML] = []) -> HTML {
        let attrs = attributes.compactMap { $0 }.map { " " + $0.rendered }.joined()
        return HTML(trusted: "<\(name)\(attrs)>" + children.map(\.rendered).joined() + "</\(name)>")
    }

    /// A void element such as `<img>` or `<meta>`.
    package static func void(_ name: StaticString, _ attributes: [Attribute?] = []) -> HTML {
        let attrs = attributes.compactMap { $0 }.map { " " + $0.rendered }.joined()
        return HTML(trusted: "<\(name)\(attrs)>")
    }

    /// Escapes the five characters that matter in text and quoted attribute values, shows a control character (C0 but
    /// tab and line breaks, DEL, C1: an upstream's NUL, ESC or NEL, which HTML forbids) as U+FFFD, as a browser shows a
    /// NUL, and closes the directional overrides, embeddings and isolates a text opens and leaves open, so that an
    /// upstream's right-to-left override reverses its own text only, never what the page writes after it.
    package static func escape(_ value: String) -> String {
        var value = value
        return value.withUTF8 { escape($0) } ?? value
    }

    /// `escape` of UTF-8 bytes; nil when there is nothing to escape (most text: no copy is made).
    private static func escape(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        guard utf8.indices.contains(where: { needsEscape(utf8, at: $0) }) else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 16)
        var index = 0
        var (embeddings, isolates) = (0, 0)
        while index < utf8.count {
            let byte = utf8[index]
            if let bidi = bidiControl(utf8, at: index) {
                switch bidi {
                case 0x2C: embeddings = max(0, embeddings - 1)
                case 0x2A, 0x2B, 0x2D, 0x2E: embeddings += 1
                case 0x69: isolates = max(0, isolates - 1)
                default: isolates += 1
                }
            }
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            default:
                if isControl(utf8, at: index) {
                    bytes.append(contentsOf: replacement)
                    // A C1 control is two bytes in UTF-8.
                    if byte == 0xC2 { index += 1 }
                } else {
                    bytes.append(byte)
                }
            }
            index += 1
        }
        // U+202C POP DIRECTIONAL FORMATTING and U+2069 POP DIRECTIONAL ISOLATE close what was left open.
        for _ in 0..<embeddings { bytes.append(contentsOf: [0xE2, 0x80, 0xAC]) }
        for _ in 0..<isolates { bytes.append(contentsOf: [0xE2, 0x81, 0xA9]) }
        // Only whole characters were replaced, by whole characters, so the UTF-8 stays valid.
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The last byte of the bidi control starting at `index` (U+202A–U+202E are `E2 80 AA`–`AE`, U+2066–U+2069
    /// `E2 81 A6`–`A9`), nil when none does.
    private static func bidiControl(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> UInt8? {
        guard utf8[index] == 0xE2, index + 2 < utf8.count else { return nil }
        switch (utf8[index + 1], utf8[index + 2]) {
        case (0x80, 0xAA...0xAE): return utf8[index + 2] - 0x80
        case (0x81, 0xA6...0xA9): return utf8[index + 2] - 0x40
        default: return nil
        }
    }

    /// U+FFFD in UTF-8.
    private static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    private static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        switch utf8[index] {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"): true
        default: isControl(utf8, at: index) || bidiControl(utf8, at: index) != nil
        }
    }

    /// Whether a control character starts at `index`: C0 but tab, LF and CR; DEL; C1 (U+0080–U+009F, `C2 80`–`C2 9F`).
    private static func isControl(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        let byte = utf8[index]
        if byte < 0x20 { return byte != 0x09 && byte != 0x0A && byte != 0x0D }
        if byte == 0x7F { return true }
        return byte == 0xC2 && index + 1 < utf8.count && (0x80...0x9F).contains(utf8[index + 1])
    }
}

/// One attribute with a static name and an escaped, double-quoted value.
package struct Attribute: Sendable {
    /// `name="value"`, escaped.
    package let rendered: String

    private init(trusted: String) { rendered = trusted }

    /// Any attribute but a URL one: the value is escaped.
    package static func attribute(_ name: StaticString, _ value: String) -> Attribute {
        Attribute(trusted: "\(name)=\"\(HTML.escape(value))\"")
    }

    /// A boolean attribute such as `selected`.
    package static func flag(_ name: StaticString) -> Attribute { Attribute(trusted: "\(name)") }

    /// `class="..."`.
    package static func `class`(_ value: String) -> Attribute { attribute("class", value) }

    /// A link inside Kiosk: only paths starting with one "/" (never "//host", never a scheme).
    package static func localHref(_ path: String) -> Attribute? {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\") else { return nil }
        return attribute("href", path)
    }

    /// A link to an element of the same page ("#main").
    package static func fragmentHref(_ fragment: String) -> Attribute? {
        guard fragment.hasPrefix("#"), fragment.dropFirst().allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else { return nil }
        return attribute("href", fragment)
    }

    /// A local path in any URL-valued attribute (`src`, `data-next`...): same rule as `localHref`.
    package static func localPath(_ name: StaticString, _ path: String) -> Attribute? {
        guard path.hasPrefix("/"), !path.hasPrefix("//"), !path.contains("\\") else { return nil }
        return attribute(name, path)
    }

    /// A script or other `src` inside Kiosk.
    package static func localSource(_ path: String) -> Attribute? { localPath("src", path) }

    /// A link out of Kiosk: only http(s) URLs; anything else (javascript:, data:...) gives no attribute.
    package static func externalHref(_ url: URL?) -> Attribute? {
        guard let url, url.opensInABrowser else { return nil }
        return attribute("href", url.absoluteString)
    }
}
