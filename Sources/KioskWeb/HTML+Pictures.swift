import Foundation
import KioskCore

extension Attribute {
    /// An image source: always Kiosk's own image route, and only for http(s) upstream URLs.
    static func imageSource(_ url: URL?) -> Attribute? {
        guard let path = SafeURL.imagePath(url) else { return nil }
        return attribute("src", path)
    }
}

/// The URL rules of the web layer.
enum SafeURL {
    /// Whether a URL is absolute http or https with a host.
    static func isWeb(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return !(url.host ?? "").isEmpty
    }

    /// `/image?url=<encoded>` for an http(s) URL, else nil.
    static func imagePath(_ url: URL?) -> String? {
        guard let url, isWeb(url) else { return nil }
        return Route.image(url).path
    }
}
