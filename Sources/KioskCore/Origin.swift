public import Foundation

/// A web origin (RFC 6454): scheme, host and port, compared exactly. Two URLs share an origin only when
/// all three match, so a port on the same host is a different place.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public var scheme: String
    /// The host, lowercased, without IPv6 brackets or a trailing dot.
    public var host: String
    /// The port, with the scheme's default filled in.
    public var port: Int

    /// The origin of an http(s) URL with a host; nil for anything else.
    public init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        self.init(scheme: scheme, host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
    }

    /// An origin from its parts (host normalised as above).
    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme.lowercased()
        var host = host.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.count > 1, host.hasSuffix(".") { host.removeLast() }
        self.host = host
        self.port = port
    }

    /// `scheme://host:port`, IPv6 hosts in brackets.
    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}

extension URL {
    /// Whether a person can open this address in a browser: http or https, with a host outside the `.invalid`
    /// top-level domain, which never resolves (RFC 6761 §6.4; the embedded demo upstream's answers name
    /// `demo.invalid`). Pages link and the CLI prints only such addresses.
    public var opensInABrowser: Bool {
        guard let scheme = scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = host?.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: ".")), !host.isEmpty else { return false }
        return host != "invalid" && !host.hasSuffix(".invalid")
    }
}
