public import Foundation
import KioskCore

/// Which HTTP proxy a request goes through: the `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` settings
/// everybody has (either case), or the config file's `proxy`, `noProxy` and `proxyLoopback`. Loopback
/// destinations (the demo upstream) go direct unless `proxyLoopback` asks otherwise, so a proxy set for
/// the rest of the machine does not swallow Kiosk's own local traffic.
public struct ProxySettings: Sendable, Hashable {
    /// The proxy for `http` URLs.
    public var httpProxy: URL?
    /// The proxy for `https` URLs.
    public var httpsProxy: URL?
    /// Hosts never proxied: `*`, a host, `.domain` or `domain` (the domain and its subdomains), an IP
    /// literal, each optionally with `:port`.
    public var noProxy: [String]
    /// Whether loopback destinations go through the proxy too (to watch the demo upstream in mitmproxy).
    public var proxyLoopback: Bool

    /// Settings as given; nothing proxied by default.
    public init(httpProxy: URL? = nil, httpsProxy: URL? = nil, noProxy: [String] = [], proxyLoopback: Bool = false) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
        self.proxyLoopback = proxyLoopback
    }

    /// No proxy at all.
    public static let none = ProxySettings()

    /// The settings read from `HTTPS_PROXY`/`https_proxy`, `HTTP_PROXY`/`http_proxy`, `NO_PROXY`/`no_proxy`
    /// (lowercase wins, as in curl) and `KIOSK_PROXY_LOOPBACK=1`; throws for a proxy that is not a URL.
    public static func fromEnvironment(_ environment: [String: String]) throws -> ProxySettings {
        func value(_ name: String) -> String? {
            let text = environment[name.lowercased()] ?? environment[name.uppercased()]
            return text.flatMap { $0.trimmingCharacters(in: .whitespaces).isEmpty ? nil : $0 }
        }
        var settings = ProxySettings()
        settings.httpProxy = try value("http_proxy").map { try proxyURL($0, setting: "HTTP_PROXY") }
        settings.httpsProxy = try value("https_proxy").map { try proxyURL($0, setting: "HTTPS_PROXY") }
        settings.noProxy = value("no_proxy").map(list) ?? []
        settings.proxyLoopback = ["1", "true", "yes"].contains(environment["KIOSK_PROXY_LOOPBACK"]?.lowercased() ?? "")
        return settings
    }

    /// A comma- or space-separated `NO_PROXY` list as entries.
    public static func list(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == " " }).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// A proxy setting's URL (`http://host:port`, or a bare `host:port`); throws a message naming the setting.
    public static func proxyURL(_ text: String, setting: String) throws -> URL {
        let full = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: full), url.scheme?.lowercased() == "http", url.host != nil else {
            throw KioskError.invalidRequest("\(setting) must be an http:// proxy URL such as http://127.0.0.1:8080, got \"\(text)\"")
        }
        return url
    }

    /// Whether any proxy is set.
    public var isEmpty: Bool { httpProxy == nil && httpsProxy == nil }

    /// The proxy for a request to `url` that will connect to `host:port` (its own host, or where a
    /// connect override sends it), or nil to go direct. `NO_PROXY` entries match either host.
    public func proxy(for url: URL, connectingTo host: String, port: Int) -> URL? {
        guard let scheme = url.scheme?.lowercased(), let proxy = scheme == "https" ? httpsProxy : httpProxy else { return nil }
        let host = Origin(scheme: scheme, host: host, port: port).host
        if !proxyLoopback, IPAddress.isLoopback(host: host) { return nil }
        if let origin = Origin(url), bypasses(origin.host, port: origin.port) { return nil }
        return bypasses(host, port: port) ? nil : proxy
    }

    private func bypasses(_ host: String, port: Int) -> Bool {
        for entry in noProxy {
            if entry == "*" { return true }
            var pattern = entry
            var entryPort: Int?
            if let colon = pattern.lastIndex(of: ":"), !pattern.hasSuffix("]"), pattern.filter({ $0 == ":" }).count == 1 {
                entryPort = Int(pattern[pattern.index(after: colon)...])
                pattern = String(pattern[..<colon])
            }
            if pattern.hasPrefix("[") && pattern.hasSuffix("]") { pattern = String(pattern.dropFirst().dropLast()) }
            if let entryPort, entryPort != port { continue }
            let domain = pattern.hasPrefix(".") ? String(pattern.dropFirst()) : pattern
            if host == domain || host.hasSuffix("." + domain) { return true }
        }
        return false
    }

}
