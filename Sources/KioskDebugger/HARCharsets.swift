import CoreFoundation
import Foundation
import KioskCore

// The charsets a HAR body's text is written back in (import) and read from (export, the log's JSON).

extension HAR {
    /// The charset a Content-Type names (`charset=GBK`), lower-cased and unquoted; nil when it names none.
    static func charset(of contentType: String?) -> String? {
        guard let contentType, let value = HTTPSyntax.parameter("charset", in: contentType) else { return nil }
        let charset = value.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "\"' "))
        return charset.isEmpty ? nil : charset
    }

    /// Whether `charset` (lower-cased) is one of UTF-8's names.
    static func isUTF8(_ charset: String) -> Bool {
        ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode11utf8", "unicode20utf8", "x-unicode20utf8"].contains(charset)
    }

    /// The encodings `charset` (lower-cased, `charset(of:)`) names, other than UTF-8, in the order to try them (none: UTF-8,
    /// which is also what a HAR's text is when no charset is named, or a label Foundation does not know). A Latin-1 or
    /// ASCII label is read as Windows-1252 first, as browsers read it (WHATWG's Encoding Standard), so that a `€` or a `’`
    /// a server sent under it has its byte; Latin-1 then, for the C1 controls Windows-1252 leaves out. Any other label
    /// is looked up by its IANA name (GBK, Big5, EUC-KR, KOI8-R, ISO-8859-7, Windows-1256, UTF-16LE...).
    static func encodings(ofCharset charset: String?) -> [String.Encoding] {
        guard let charset, !isUTF8(charset) else { return [] }
        switch charset {
        case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "iso_8859-1", "cp819", "windows-1252", "cp1252", "x-cp1252",
             "us-ascii", "ascii":
            return [.windowsCP1252, .isoLatin1]
        default: return encoding(ianaName: charset).map { [$0] } ?? []
        }
    }

    /// The encoding an IANA charset name or alias (any case) names, when this platform's Foundation converts it; nil for a
    /// name it does not know (`x-user-defined`). CoreFoundation holds the one table of names, which Foundation's own
    /// encodings come from on Linux too. (swift-corelibs-foundation here converts every legacy charset WHATWG lists but EUC-JP.)
    private static func encoding(ianaName name: String) -> String.Encoding? {
        guard let string = CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue) else { return nil }
        let encoding = CFStringConvertIANACharSetNameToEncoding(string)
        guard encoding != kCFStringEncodingInvalidId, CFStringIsEncodingAvailable(encoding) else { return nil }
        return String.Encoding(rawValue: UInt(CFStringConvertEncodingToNSStringEncoding(encoding)))
    }

    /// `text` in the bytes of the charset it is labelled with, when that charset is not UTF-8 and holds it: read back, the
    /// bytes are the text again (a converter that writes `?` for what it lacks has not held it). Nil otherwise.
    static func encoded(_ text: String, charset: String?) -> Data? {
        encodings(ofCharset: charset).lazy.compactMap { encoding in
            text.data(using: encoding).flatMap { String(data: $0, encoding: encoding) == text ? $0 : nil }
        }.first
    }

    /// `bytes` as the text of `charset` (not UTF-8: `encodings(ofCharset:)`), when they are that charset's and written
    /// again make the same bytes (an export read back must give the body byte for byte); nil otherwise.
    static func decoded(_ bytes: Data, charset: String?) -> String? {
        encodings(ofCharset: charset).lazy.compactMap { encoding in
            String(data: bytes, encoding: encoding).flatMap { $0.data(using: encoding) == bytes ? $0 : nil }
        }.first
    }
}
