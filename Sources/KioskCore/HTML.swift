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

    /// Escapes the five characters that matter in text and quoted attribute values.
    package static func escape(_ value: String) -> String {
        // Most text has nothing to escape: return it as it is, without building a copy.
        let utf8 = value.utf8
        guard utf8.contains(where: { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: "<") || $0 == UInt8(ascii: ">")
                                     || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "'") }) else { return value }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 16)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "&"): bytes.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): bytes.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): bytes.append(contentsOf: "&gt;".utf8)
            case UInt8(ascii: "\""): bytes.append(contentsOf: "&quot;".utf8)
            case UInt8(ascii: "'"): bytes.append(contentsOf: "&#39;".utf8)
            default: bytes.append(byte)
            }
        }
        // Only ASCII bytes were replaced, by ASCII, so the UTF-8 stays valid.
        return String(decoding: bytes, as: UTF8.self)
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
