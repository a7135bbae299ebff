/// The cookies Kiosk's own pages set (the reader's language and visit, the CSRF token, a paired device, the debugger's
/// session): every name starts `kiosk_`, or `__Host-kiosk_` for one the browser keeps to HTTPS and this host.
///
/// A browser sends a host's cookies to every port of it, so an app on `127.0.0.1:3000`, and every reverse listener,
/// receives Kiosk's too; the proxy takes them out of what it forwards (`withoutKiosks`), as they are Kiosk's secrets
/// (a debugger session, a device's pairing), never the app's.
public enum KioskCookies {
    /// Whether `name` is one of Kiosk's cookies.
    public static func isKiosks(_ name: some StringProtocol) -> Bool {
        name.hasPrefix("kiosk_") || name.hasPrefix("__Host-kiosk_")
    }

    /// A `Cookie` field value (RFC 6265 §4.2.1: `name=value` pairs joined by `; `) without Kiosk's cookies, the others in
    /// order and as written; nil when none is left.
    public static func withoutKiosks(_ value: String) -> String? {
        // Nearly every Cookie field holds none of Kiosk's: nothing to rewrite.
        guard value.contains("kiosk_") else { return value }
        let kept = value.split(separator: ";", omittingEmptySubsequences: true).filter { pair in
            let name = pair.drop { $0 == " " || $0 == "\t" }.prefix { $0 != "=" }
            return !isKiosks(name.trimmingSuffix(while: { $0 == " " || $0 == "\t" }))
        }
        guard !kept.isEmpty else { return nil }
        return kept.map { $0.drop { $0 == " " || $0 == "\t" } }.joined(separator: "; ")
    }
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var result = self
        while let last = result.last, predicate(last) { result.removeLast() }
        return result
    }
}
