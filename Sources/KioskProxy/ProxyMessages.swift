import Foundation
import KioskCore
import KioskNetwork
import NIOCore
import NIOHTTP1

/// How an app's request line and headers become the request Kiosk forwards, and the upstream's answer the one the
/// app gets: what a proxy must change (hop-by-hop fields out, `Via` in) and nothing else.
enum ProxyMessages {
    /// What Kiosk adds to `Via` (RFC 9110 §7.6.3), and looks for to tell a request that came round to itself.
    static func viaToken(_ pseudonym: String) -> String { "1.1 \(pseudonym)" }

    /// Why a request is answered by the proxy itself rather than forwarded.
    struct Refusal: Error, Equatable, Sendable {
        let status: HTTPResponseStatus
        let message: String
        /// Whether the connection must close after the answer (the framing of what follows cannot be trusted).
        let closes: Bool
        /// A 407's `Proxy-Authenticate` challenge.
        let challenge: String?
        /// What the proxy's cache decided, for a forwarded request that failed.
        var cacheStatus: CacheStatus?

        init(_ status: HTTPResponseStatus, _ message: String, closes: Bool = false, challenge: String? = nil) {
            self.status = status
            self.message = message
            self.closes = closes
            self.challenge = challenge
        }
    }

    /// Where a request goes, read from its request line: absolute-form (RFC 9112 §3.2.2) on the forward proxy's
    /// listener; origin-form under `base` inside an intercepted CONNECT (`https://host:port`) or on a reverse
    /// listener (its upstream URL, base path included).
    static func target(of head: HTTPRequestHead, under base: URL? = nil) throws(Refusal) -> URL {
        let uri = HTTPSyntax.escapingDisallowed(head.uri)
        try checkEscapes(uri)
        if let base {
            if head.method == .CONNECT { throw Refusal(.badRequest, "CONNECT is answered by the forward proxy's listener only.", closes: true) }
            // An absolute-form target (RFC 9112 §3.2.2: a server must take one) names this listener's upstream whatever
            // its authority says: a reverse listener or an intercepted CONNECT never reaches another host.
            var path = uri
            if !path.hasPrefix("/") {
                guard path != "*" else {
                    throw Refusal(.badRequest, "This listener forwards requests for paths to \(shown(base.absoluteString)); * names none.")
                }
                let absolute = try target(of: head)
                path = (absolute.path(percentEncoded: true).isEmpty ? "/" : absolute.path(percentEncoded: true))
                    + (absolute.query(percentEncoded: true).map { "?" + $0 } ?? "")
            }
            var prefix = base.absoluteString
            while prefix.hasSuffix("/") { prefix.removeLast() }
            // Under a base path, `..` must not climb out of it: most upstreams resolve dot segments, and `/base/../admin`
            // would reach what the listener does not forward. They are resolved here first, as nginx does.
            if base.path(percentEncoded: true).contains(where: { $0 != "/" }) {
                // `..;x` is no dot segment to RFC 3986 (nor to nginx), but Tomcat and Spring read it as `..` with a
                // parameter: `/..;/admin` under `/base/` would climb out there. Such a segment has no honest use.
                // An encoded slash or backslash, or a raw backslash, separates segments to many upstreams (nginx decodes
                // `%2F` before it resolves dot segments; Windows' servers split at `\`): `/..%2fadmin` climbs as `/../admin`.
                // Checked as such a reader sees it; what is sent is the path as written, resolved as RFC 3986 reads it.
                // Both the path written and the one sent (its plain dot segments resolved: `/a%2fb/../..%2fadmin` is sent
                // as `/..%2fadmin`) are read so.
                let resolved = resolvingDotSegments(path)
                let readings = [path, everyEscapedSeparatorAsSlash(path)] + (resolved.map { [everyEscapedSeparatorAsSlash($0)] } ?? [])
                if readings.contains(where: hasDotSegmentWithParameters) {
                    throw Refusal(.badRequest, "The request's path has a dot segment with parameters (..;), which servers read "
                                  + "differently: \(shown(head.uri)).")
                }
                guard let resolved, readings.allSatisfy({ resolvingDotSegments($0) != nil }) else {
                    throw Refusal(.badRequest, "The request's path climbs above the root with .. segments: \(shown(head.uri)).")
                }
                path = resolved
            }
            guard let url = URL(string: prefix + path), url.host != nil else {
                throw Refusal(.badRequest, "The request's target is not a valid path: \(shown(head.uri)).")
            }
            return url
        }
        if uri.hasPrefix("/") || uri == "*" {
            throw Refusal(.badRequest, "This is Kiosk's proxy: it takes requests for whole URLs (GET http://host/path), as an "
                          + "app sends them when its HTTP proxy is set to this address. \(head.uri) names no host.")
        }
        // Parsed once (its parts read from that one parse, where components and then their `url` parse twice), with
        // what an app left unencoded (`|`, `[`, a space) escaped already.
        guard let url = URL(string: uri), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw Refusal(.badRequest, "The request line's target is not an http:// URL: \(shown(head.uri)).")
        }
        guard let host = url.host(percentEncoded: true), !host.isEmpty, url.user(percentEncoded: true) == nil,
              url.password(percentEncoded: true) == nil else {
            throw Refusal(.badRequest, "The request line's URL has no host, or carries a user name: \(shown(head.uri)).")
        }
        // The port as written: one too long for a number leaves `url.port` nil, as none at all would.
        let afterScheme = uri[(HTTPSyntax.schemeEnd(of: uri) ?? uri.startIndex)...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostEnd = authority.hasPrefix("[") ? authority.firstIndex(of: "]") ?? authority.endIndex : authority.startIndex
        if let colon = authority[hostEnd...].lastIndex(of: ":") {
            let portText = authority[authority.index(after: colon)...]
            guard portText.isEmpty || (portText.allSatisfy(\.isASCII) && Int(portText).map({ (1...65_535).contains($0) }) == true) else {
                throw Refusal(.badRequest, "The port \(shown(String(portText.prefix(30)))) is outside 1–65535.")
            }
        }
        return url
    }

    /// `target` with `%2F`, `%5C` and `\` in its path read as `/`, as upstreams that decode them before resolving read it.
    static func everyEscapedSeparatorAsSlash(_ target: String) -> String {
        let pathEnd = target.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? target.endIndex
        let path = target[..<pathEnd]
        guard path.contains(where: { $0 == "%" || $0 == "\\" }) else { return target }
        return path.replacingOccurrences(of: "%2[fF]|%5[cC]|\\\\", with: "/", options: .regularExpression) + target[pathEnd...]
    }

    /// Whether a segment of `target`'s path is `.` or `..` (a dot percent-encoded or not) followed by `;` parameters.
    static func hasDotSegmentWithParameters(_ target: String) -> Bool {
        let pathEnd = target.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? target.endIndex
        return target[..<pathEnd].split(separator: "/").contains { segment in
            let lowered = segment.lowercased().replacingOccurrences(of: "%2e", with: ".").replacingOccurrences(of: "%3b", with: ";")
            guard let semicolon = lowered.firstIndex(of: ";") else { return false }
            return [".", ".."].contains(lowered[..<semicolon])
        }
    }

    /// An origin-form `target` with the dot segments of its path resolved (RFC 3986 §5.2.4), `%2E` read as a dot, its
    /// query as it was; nil when a `..` climbs above the root. A path without dot segments comes back unchanged.
    static func resolvingDotSegments(_ target: String) -> String? {
        let pathEnd = target.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? target.endIndex
        let segments = target[..<pathEnd].split(separator: "/", omittingEmptySubsequences: false)
        /// 1 for `.`, 2 for `..` (any of their dots percent-encoded), else nil.
        func dots(_ segment: Substring) -> Int? {
            guard segment.count <= 6, segment.first == "." || segment.first == "%" else { return nil }
            switch segment.lowercased().replacingOccurrences(of: "%2e", with: ".") {
            case ".": return 1
            case "..": return 2
            default: return nil
            }
        }
        guard segments.contains(where: { dots($0) != nil }) else { return target }
        var kept: [Substring] = []
        for (index, segment) in segments.enumerated().dropFirst() {
            let last = index == segments.count - 1
            switch dots(segment) {
            case 1:
                if last { kept.append("") }
            case 2:
                guard !kept.isEmpty else { return nil }
                kept.removeLast()
                if last { kept.append("") }
            default:
                kept.append(segment)
            }
        }
        return "/" + kept.joined(separator: "/") + target[pathEnd...]
    }

    /// Refuses a target whose path the upstream would not get as sent (`HTTPSyntax.escapeProblem(in:)`).
    static func checkEscapes(_ target: String) throws(Refusal) {
        guard HTTPSyntax.escapeProblem(in: target) != nil else { return }
        throw Refusal(.badRequest, "The request's path has percent escapes that are not UTF-8 text (such as %FF or Latin-1's %E9): "
                      + "\(shown(target)). Kiosk's HTTP client cannot send such a path unchanged, so it is refused rather than "
                      + "sent to another path.")
    }

    /// Where a CONNECT goes: its authority-form target, `host:port` (RFC 9112 §3.2.3), an IPv6 literal bracketed.
    static func tunnelTarget(of head: HTTPRequestHead) throws(Refusal) -> (host: String, port: Int) {
        let target = head.uri
        // (Which Host counts would be a guess, as for any other request.)
        if head.headers["Host"].count > 1 {
            throw Refusal(.badRequest, "The request has more than one Host field.", closes: true)
        }
        if target.contains("://") {
            throw Refusal(.badRequest, "CONNECT takes host:port (such as example.com:443), not a URL: \(shown(target)).", closes: true)
        }
        let host: Substring, portText: Substring
        if target.hasPrefix("["), let close = target.firstIndex(of: "]") {
            host = target[target.index(after: target.startIndex)..<close]
            let rest = target[target.index(after: close)...]
            guard rest.hasPrefix(":") else { throw Refusal(.badRequest, "CONNECT needs host:port, not \(shown(target)).", closes: true) }
            portText = rest.dropFirst()
        } else {
            guard let colon = target.lastIndex(of: ":") else {
                throw Refusal(.badRequest, "CONNECT needs host:port, not \(shown(target)).", closes: true)
            }
            host = target[..<colon]
            portText = target[target.index(after: colon)...]
            // `1::2:3` is itself an address: where its port would start is a guess (RFC 9110's authority brackets IPv6).
            if host.contains(":") {
                throw Refusal(.badRequest, "CONNECT's IPv6 address goes in brackets, as [::1]:443: \(shown(target)).", closes: true)
            }
        }
        guard portText.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let port = Int(portText),
              (1...65_535).contains(port) else {
            throw Refusal(.badRequest, "CONNECT's port must be between 1 and 65535: \(shown(target)).", closes: true)
        }
        guard let name = hostName(host, bracketed: target.hasPrefix("[")) else {
            throw Refusal(.badRequest, "CONNECT's host is not a host name or address: \(shown(target)).", closes: true)
        }
        return (name, port)
    }

    /// A CONNECT's host as the proxy names it — lowercased, without a final dot — when it is an address (an IPv6 one
    /// only in brackets, without a zone: a zone names an interface of the app's machine, not of Kiosk's) or a DNS name a
    /// certificate can carry: labels of 1 to 63 ASCII letters, digits, `-` or `_`, 253 characters at most (RFC 1035,
    /// RFC 5280 §4.2.1.6); nil otherwise.
    static func hostName(_ host: Substring, bracketed: Bool) -> String? {
        var name = host.lowercased()
        // An address in its one canonical spelling (`127.1` and `2130706433` are 127.0.0.1), which patterns match.
        if bracketed || name.contains(":") {
            guard bracketed, !name.contains("%") else { return nil }
            guard let address = IPAddress(literal: name), address.bytes.count == 16 else { return nil }
            return address.description
        }
        if name.hasSuffix("."), !name.hasSuffix("..") { name.removeLast() }
        if let address = IPAddress(literal: name) { return address.description }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard !name.isEmpty, name.utf8.count <= 253, labels.allSatisfy({ label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }) else { return nil }
        return name
    }

    /// The name an intercepted connection's leaf is for and its requests go to: the one the app's TLS hello asks for
    /// (SNI, lowercased, without a final dot) when it is a host name, else the CONNECT's host — as when the hello names
    /// none, or an address (RFC 6066 allows names only), or something no certificate can carry.
    static func serverName(_ asked: String?, connectedTo host: String) -> String {
        guard var name = asked else { return host }
        name = name.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard name.utf8.count <= 253, IPAddress(literal: name) == nil,
              labels.allSatisfy({ (1...63).contains($0.utf8.count) && $0.utf8.allSatisfy { byte in
                  (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                      || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
              } }) else { return host }
        return name
    }

    /// The request to forward: the target, the app's fields without the hop-by-hop ones (and `Expect`, which the
    /// proxy answers itself), `Via` added, the body if the app sent one. Refuses framing a proxy must not guess:
    /// both `Content-Length` and `Transfer-Encoding` (request smuggling). An `Upgrade` that reaches here (h2c, or
    /// one its `Connection` does not name) is dropped like any hop-by-hop field: the exchange stays HTTP/1.1.
    /// `Host` names the target's authority, whatever the app sent (RFC 9112 §3.2.2: a proxy generates it from the
    /// target; on a reverse listener the upstream rather than the listener). `forNetwork`: the client is on another machine
    /// (`.proxiedForNetwork`).
    static func request(_ head: HTTPRequestHead, url: URL, body: Data?, via: String,
                        forNetwork: Bool = false, reverse: (upstream: URL, listener: String)? = nil) throws(Refusal) -> HTTPRequest {
        try checkFraming(head)
        var fields = forwardable(head.headers)
        fields.removeAll { HTTPHeaderFields.sameName($0.name, "expect") }
        setHost(&fields, for: url)
        if let reverse { unrelocate(&fields, upstream: reverse.upstream, listener: reverse.listener) }
        // One hop less for the next recipient (RFC 9110 §7.6.2; 0 was answered by `lastHop`).
        if head.method == .OPTIONS || head.method == .TRACE,
           let index = fields.firstIndex(where: { HTTPHeaderFields.sameName($0.name, "max-forwards") }),
           let hops = Int(fields[index].value.trimmingCharacters(in: .whitespaces)), hops > 0 {
            fields[index].value = String(hops - 1)
        }
        appendVia(&fields, via: via, received: head.version)
        return HTTPRequest(method: head.method.rawValue, url: url, headers: HTTPHeaderFields(fields), body: body,
                           source: nil, endpoint: HTTPRequest.endpoint(of: url), purpose: forNetwork ? .proxiedForNetwork : .proxied)
    }

    /// The protocol a request asks to switch to (RFC 9110 §7.8: `Upgrade`, named in `Connection`), lowercased, when the
    /// proxy passes the switch on as a tunnel: `websocket` and any other protocol but `h2c`, which is left out so that
    /// the exchange stays HTTP/1.1 and readable (curl `--http2` on plain http asks for it and takes HTTP/1.1).
    static func upgrade(of head: HTTPRequestHead) -> String? {
        guard let wanted = head.headers.first(name: "Upgrade")?.trimmingCharacters(in: .whitespaces), !wanted.isEmpty,
              namesUpgrade(head) else { return nil }
        let protocols = wanted.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard !protocols.allSatisfy({ $0.hasPrefix("h2c") }) else { return nil }
        return protocols.first { !$0.hasPrefix("h2c") }
    }

    /// Whether the request's `Connection` names `Upgrade`: with an `Upgrade` field, a request to switch protocols, after
    /// which NIO's parser reads no further request.
    static func namesUpgrade(_ head: HTTPRequestHead) -> Bool {
        head.headers["Connection"].contains { $0.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "upgrade" } }
    }

    /// An upgrade request as the upstream gets it, in bytes and as fields (for the log): the request line in origin-form, the app's fields
    /// without the hop-by-hop ones except `Upgrade` itself and `Connection: Upgrade`, `Host` naming the target's
    /// authority, `Via` added. The app's body, if any, follows it.
    static func upgradeRequest(_ head: HTTPRequestHead, url: URL, bodyLength: Int, via: String,
                               reverse: (upstream: URL, listener: String)? = nil) throws(Refusal)
        -> (bytes: ByteBuffer, fields: [(name: String, value: String)]) {
        try checkFraming(head)
        var fields = forwardable(head.headers)
        fields.removeAll { ["expect", "transfer-encoding"].contains($0.name.lowercased()) }
        if let reverse { unrelocate(&fields, upstream: reverse.upstream, listener: reverse.listener) }
        // The body goes on whole, after the head: one the app sent chunked is framed by its length, or the upstream would
        // read its bytes as the switched protocol's first (or as the next request, refusing the switch).
        if head.headers.contains(name: "Transfer-Encoding") { fields.append((name: "Content-Length", value: String(bodyLength))) }
        setHost(&fields, for: url)
        fields.append((name: "Connection", value: "Upgrade"))
        fields += head.headers["Upgrade"].map { (name: "Upgrade", value: $0) }
        appendVia(&fields, via: via, received: head.version)
        return try upgradeRequest(method: head.method.rawValue, url: url, fields: fields)
    }

    /// The head of a protocol switch as it goes upstream: `method`, `url`'s path and query in origin form, and `fields` as
    /// they are (made by `upgradeRequest`, or edited at a breakpoint).
    static func upgradeRequest(method: String, url: URL, fields: [(name: String, value: String)]) throws(Refusal)
        -> (bytes: ByteBuffer, fields: [(name: String, value: String)]) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            throw Refusal(.badRequest, "The request's target is not a valid URL: \(shown(url.absoluteString)).")
        }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        var text = "\(method) \(target) HTTP/1.1\r\n"
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        text += "\r\n"
        return (ByteBuffer(string: text), fields)
    }

    /// The proxy's own answer to an OPTIONS or TRACE whose `Max-Forwards` is 0 (RFC 9110 §7.6.2: the recipient that
    /// finds 0 answers itself): what it allows, or the request as received, without the fields that carry credentials
    /// (§9.3.8). Nil for any other request, which `request` forwards with `Max-Forwards` one less.
    static func lastHop(_ head: HTTPRequestHead) -> ProxySetup.Answer? {
        guard head.method == .OPTIONS || head.method == .TRACE,
              let hops = head.headers.first(name: "Max-Forwards").flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }), hops == 0 else {
            return nil
        }
        if head.method == .OPTIONS {
            return ProxySetup.Answer(status: .ok, contentType: "text/plain; charset=utf-8", body: [],
                                     fields: [("Allow", "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT")])
        }
        let sensitive: Set<String> = ["authorization", "proxy-authorization", "cookie"]
        var text = "TRACE \(head.uri) HTTP/\(head.version.major).\(head.version.minor)\r\n"
        for field in head.headers where !sensitive.contains(field.name.lowercased()) { text += "\(field.name): \(field.value)\r\n" }
        return ProxySetup.Answer(status: .ok, contentType: "message/http", body: Array((text + "\r\n").utf8))
    }

    /// Refuses a request whose end or target the proxy would have to guess (RFC 9112 §6.3, §3.2): both `Content-Length`
    /// and `Transfer-Encoding` (request smuggling), a transfer coding besides chunked (501: the proxy does not decode it,
    /// and would pass its bytes on unmarked), more than one `Host`.
    static func checkFraming(_ head: HTTPRequestHead) throws(Refusal) {
        if head.headers.contains(name: "Content-Length") && head.headers.contains(name: "Transfer-Encoding") {
            throw Refusal(.badRequest, "The request has both Content-Length and Transfer-Encoding, so its end is ambiguous.",
                          closes: true)
        }
        let codings = head.headers[canonicalForm: "Transfer-Encoding"].map { $0.lowercased() }
        if let coding = codings.first(where: { $0 != "chunked" }) {
            throw Refusal(.notImplemented, "The request's body has the transfer coding \(shown(String(coding))), which Kiosk does not "
                          + "decode; send it chunked alone.", closes: true)
        }
        if head.headers["Host"].count > 1 {
            throw Refusal(.badRequest, "The request has more than one Host field.", closes: true)
        }
    }

    /// Replaces `Host` in `fields` with the authority of `url`.
    private static func setHost(_ fields: inout [(name: String, value: String)], for url: URL) {
        guard let host = url.host(percentEncoded: false) else { return }
        fields.removeAll { HTTPHeaderFields.sameName($0.name, "host") }
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        fields.insert((name: "Host", value: url.port.map { "\(name):\($0)" } ?? name), at: 0)
    }

    /// The app's answer: the upstream's status and fields without the hop-by-hop ones, `Via` added, the length
    /// of the body as held (a HEAD's, a 204's and a 304's as the upstream said, with no body; a streamed one's as the
    /// upstream declared it, or none).
    /// With `relocating`, a `Location`, `Content-Location`, `Refresh` or `Link` under the reverse listener's upstream base is said under the
    /// listener's own address instead, so a redirect keeps the app on Kiosk, and a cookie's `Path` and `Domain` are
    /// said for the listener (`relocatedCookie`), so the app sends it back (nginx's `proxy_redirect` and
    /// `proxy_cookie_path`).
    static func responseHead(_ response: HTTPResponse, method: HTTPMethod, version: HTTPVersion, via: String,
                             relocating: (upstream: URL, listener: String)? = nil) -> HTTPResponseHead {
        var fields = forwardable(response.headers.fields)
        if let relocating {
            for index in fields.indices {
                let name = fields[index].name
                if HTTPHeaderFields.sameName(name, "location") || HTTPHeaderFields.sameName(name, "content-location") {
                    fields[index].value = relocated(fields[index].value, upstream: relocating.upstream, listener: relocating.listener)
                } else if HTTPHeaderFields.sameName(name, "refresh") {
                    fields[index].value = relocatedRefresh(fields[index].value, upstream: relocating.upstream, listener: relocating.listener)
                } else if HTTPHeaderFields.sameName(name, "link") {
                    fields[index].value = relocatedLink(fields[index].value, upstream: relocating.upstream, listener: relocating.listener)
                } else if HTTPHeaderFields.sameName(name, "set-cookie") {
                    fields[index].value = relocatedCookie(fields[index].value, upstream: relocating.upstream)
                }
            }
        }
        let bodiless = method == .HEAD || response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        // The framing is set here, whole (the encoder adds none): a HEAD's answer keeps the length the upstream declared,
        // or has none — never a chunked coding, whose last chunk would be a body; a 204's, a 304's and a 1xx's has neither.
        // A streamed body passes whole, so the upstream's declared length (if any) stays true; without one it goes
        // chunked (or, to an HTTP/1.0 app, until the connection closes).
        if response.status == 204 || response.status == 304 || (100..<200).contains(response.status) {
            fields.removeAll { HTTPHeaderFields.sameName($0.name, "content-length") }
        } else if !bodiless, response.stream == nil {
            fields.removeAll { HTTPHeaderFields.sameName($0.name, "content-length") }
            fields.append((name: "Content-Length", value: String(response.body.count)))
        } else if !bodiless, (version.major, version.minor) >= (1, 1), !fields.contains(where: { HTTPHeaderFields.sameName($0.name, "content-length") }) {
            fields.append((name: "Transfer-Encoding", value: "chunked"))
        }
        appendVia(&fields, via: via)
        // A recipient with a clock dates an answer that came without a `Date` when it forwards it (RFC 9110 §6.6.1).
        if !fields.contains(where: { HTTPHeaderFields.sameName($0.name, "date") }) {
            fields.append((name: "Date", value: HTTPDate.formatCached(Date())))
        }
        // NIO names no 103 (RFC 8297): said as its RFC does.
        let status = response.status == 103 ? HTTPResponseStatus(statusCode: 103, reasonPhrase: "Early Hints")
            : HTTPResponseStatus(statusCode: response.status)
        return HTTPResponseHead(version: version, status: status, headers: HTTPHeaders(fields.map { ($0.name, $0.value) }))
    }

    /// A reverse listener's `location` as the app should follow it: one under the upstream base (`http://up/base`) — as
    /// a whole URL, a scheme-relative one (`//up/base/x`) or a path (`/base/x`) — is said under `listener`
    /// (`http://host:port`, the address the app used); anything else is kept as it is. "Under" means at a path segment's
    /// boundary: `/basement` is not under `/base`.
    static func relocated(_ location: String, upstream base: URL, listener: String) -> String {
        let basePath = base.path(percentEncoded: true).hasSuffix("/") ? String(base.path(percentEncoded: true).dropLast())
            : base.path(percentEncoded: true)
        /// What follows the base path in `path` (with its query and fragment), nil when `path` is not under it.
        func remainder(_ components: URLComponents) -> String? {
            let path = components.percentEncodedPath
            guard path == basePath || path.hasPrefix(basePath + "/") || basePath.isEmpty else { return nil }
            var rest = String(path.dropFirst(basePath.count))
            if rest.isEmpty { rest = "/" }
            if let query = components.percentEncodedQuery { rest += "?" + query }
            if let fragment = components.percentEncodedFragment { rest += "#" + fragment }
            return rest
        }
        if location.hasPrefix("/") && !location.hasPrefix("//") {
            // A path of the upstream's: under the listener it lacks the base path.
            guard !basePath.isEmpty, let components = URLComponents(string: location), let rest = remainder(components) else { return location }
            return rest
        }
        let scheme = base.scheme?.lowercased() ?? "http"
        guard let components = URLComponents(string: location.hasPrefix("//") ? scheme + ":" + location : location),
              components.scheme?.lowercased() == scheme,
              bareHost(components.host) == bareHost(base.host(percentEncoded: true)),
              (components.port ?? Self.defaultPort(scheme)) == (base.port ?? Self.defaultPort(scheme)),
              let rest = remainder(components)
        else { return location }
        return listener + rest
    }

    private static func defaultPort(_ scheme: String) -> Int { scheme == "https" ? 443 : 80 }

    /// A host lowercased and without an IPv6 address's brackets, which one API gives and another does not (`[::1]`, `::1`).
    private static func bareHost(_ host: String?) -> String? {
        host.map { $0.hasPrefix("[") && $0.hasSuffix("]") ? String($0.dropFirst().dropLast()) : $0 }?.lowercased()
    }

    /// A host as a URL's authority writes it: an IPv6 address in brackets (`http://[::1]:8080`, never `http://::1:8080`).
    private static func authorityHost(_ host: String) -> String { host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host }

    /// A reverse listener's request as its upstream should read it, the other way from `relocated`: an `Origin` naming the
    /// listener (`listener`, the address the app used) names the upstream's origin instead, and a `Referer` under the
    /// listener the same page under the upstream base — so an app that checks them (Django's and Rails' CSRF checks,
    /// a WebSocket server's origin check) sees a request from its own pages, as it would without Kiosk, since Host
    /// names it too. Any other origin (a page elsewhere) is left as it is, for the app to refuse as it would.
    static func unrelocate(_ fields: inout [(name: String, value: String)], upstream base: URL, listener: String) {
        let scheme = base.scheme?.lowercased() ?? "http"
        var origin = scheme + "://" + authorityHost(base.host(percentEncoded: true) ?? "")
        if let port = base.port, port != defaultPort(scheme) { origin += ":\(port)" }
        let basePath = base.path(percentEncoded: true).hasSuffix("/") ? String(base.path(percentEncoded: true).dropLast())
            : base.path(percentEncoded: true)
        let listener = listener.lowercased()
        for index in fields.indices {
            let value = fields[index].value.trimmingCharacters(in: .whitespaces)
            if HTTPHeaderFields.sameName(fields[index].name, "origin"), value.lowercased() == listener {
                fields[index].value = origin
            } else if HTTPHeaderFields.sameName(fields[index].name, "referer"), value.lowercased().hasPrefix(listener) {
                let rest = value.dropFirst(listener.count)
                guard rest.isEmpty || rest.hasPrefix("/") || rest.hasPrefix("?") else { continue }
                fields[index].value = origin + basePath + (rest.hasPrefix("/") ? rest : "/" + rest)
            }
        }
    }

    /// A `Link` field (RFC 8288: `</base/app.js>; rel=preload, <http://up/base/?page=2>; rel=next`) with each target
    /// between its angle brackets `relocated`, the parameters as they are.
    static func relocatedLink(_ value: String, upstream base: URL, listener: String) -> String {
        var result = ""
        var rest = Substring(value)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open] + relocated(String(rest[rest.index(after: open)..<close]), upstream: base, listener: listener) + ">"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// A `Refresh` field (`5; url=http://up/base/next`, as HTML's meta refresh reads it) with its URL `relocated`.
    static func relocatedRefresh(_ value: String, upstream base: URL, listener: String) -> String {
        guard let equals = value.range(of: "url=", options: .caseInsensitive) else { return value }
        var target = value[equals.upperBound...].trimmingCharacters(in: .whitespaces)
        var quote = ""
        if let first = target.first, first == "'" || first == "\"", target.count >= 2, target.last == first {
            quote = String(first)
            target = String(target.dropFirst().dropLast())
        }
        return value[..<equals.upperBound] + quote + relocated(target, upstream: base, listener: listener) + quote
    }

    /// A reverse listener's `Set-Cookie` value as the app's browser must read it to send the cookie back: a `Path` under
    /// the upstream's base path lacks it (the app's addresses do: `Path=/app/x` is `/x`, `Path=/app` is `/`), and a
    /// `Domain` naming the upstream's host goes (the cookie is then the listener's host's alone, which a domain the
    /// app never sees could not be). Everything else — the cookie, its other attributes, their spelling — as it came.
    static func relocatedCookie(_ value: String, upstream base: URL) -> String {
        let basePath = base.path(percentEncoded: true).hasSuffix("/") ? String(base.path(percentEncoded: true).dropLast())
            : base.path(percentEncoded: true)
        let host = base.host(percentEncoded: true)?.lowercased() ?? ""
        var parts = value.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1 else { return value }
        var changed = false
        for index in parts.indices.dropFirst().reversed() {
            let attribute = parts[index].trimmingCharacters(in: .whitespaces)
            guard let equals = attribute.firstIndex(of: "=") else { continue }
            let name = attribute[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let argument = attribute[attribute.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if name == "path", !basePath.isEmpty, argument == basePath || argument.hasPrefix(basePath + "/") {
                let rest = argument.dropFirst(basePath.count)
                parts[index] = " " + attribute[..<equals] + "=" + (rest.isEmpty ? "/" : rest)
                changed = true
            } else if name == "domain", argument.lowercased().trimmingPrefix(".") == host[...] {
                parts.remove(at: index)
                changed = true
            }
        }
        return changed ? parts.joined(separator: ";") : value
    }

    /// Whether a body is written after `head` for a request of `method`.
    static func carriesBody(_ head: HTTPResponseHead, method: HTTPMethod) -> Bool {
        !(method == .HEAD || head.status == .noContent || head.status == .notModified || (100..<200).contains(head.status.code))
    }

    /// What the proxy answers itself when forwarding failed, in the log's words: 504 for a timeout, 502 for the rest.
    static func failure(_ error: any Error, url: URL) -> Refusal {
        let shownURL = url.redactedString
        // The host with its port, which tells apart a machine's several servers (the error names the host alone).
        func place(_ host: String) -> String {
            let isAddress = IPAddress(literal: host) != nil
            // (Some errors name the authority, port and all, already.)
            guard isAddress || !host.contains(":") else { return host }
            let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            return (host.contains(":") ? "[\(host)]" : host) + ":\(port)"
        }
        var refusal = switch error.kioskError {
        case .timeout(_, let seconds)?:
            Refusal(.gatewayTimeout, "The upstream did not answer \(shownURL) within \(Int(seconds)) s.")
        case .stalledBody(_, let seconds, let expected, let received)?:
            Refusal(.gatewayTimeout, "The upstream sent the head of its answer to \(shownURL) and \(received)"
                    + (expected > 0 ? " of \(expected)" : "") + " bytes of its body, and not the rest within \(Int(seconds)) s.")
        case .offline(let host, .unresolved)?:
            Refusal(.badGateway, "Kiosk could not connect to \(host): the name does not resolve (DNS).")
        case .offline(let host, .refused)?:
            Refusal(.badGateway, "Kiosk could not connect to \(place(host)): it refused the connection (nothing listens on that port).")
        case .offline(let host, .unreachable)?:
            Refusal(.badGateway, "Kiosk could not connect to \(place(host)): no route to it.")
        // A gateway's timeout (RFC 9110 §15.6.5), as nginx answers its connect timeout.
        case .offline(let host, .noAnswer)?:
            Refusal(.gatewayTimeout, "Kiosk could not connect to \(place(host)): it did not answer the connection in time.")
        case .offline(let host, .noHandshake)?:
            Refusal(.gatewayTimeout, "Kiosk could not connect to \(place(host)): it took the connection but did not answer its TLS handshake in time.")
        case .refused(_, let reason)?:
            Refusal(.badGateway, "Kiosk refused to forward \(shownURL): \(reason).")
        case .truncatedBody(_, let expected, let received)?:
            Refusal(.badGateway, expected > 0 ? "The upstream closed the connection after \(received) of \(expected) bytes of \(shownURL)."
                    : "The upstream closed the connection after \(received) bytes of \(shownURL), before the end of its body (a chunked "
                      + "body's last chunk never came).")
        case .transport(_, let message)?:
            Refusal(.badGateway, "The exchange with the upstream failed: \(message).")
        case .unreadableAnswer(_, let problem)?:
            Refusal(.badGateway, "Kiosk refused the upstream's answer to \(shownURL): \(problem).")
        case .cancelled?:
            Refusal(.badGateway, "The request was cancelled before the upstream answered.")
        case let other?:
            Refusal(.badGateway, other.description)
        case nil:
            Refusal(.badGateway, "The exchange with the upstream failed: \(error).")
        }
        let marked = error as? CacheMarkedFailure
        switch marked?.withheld {
        case .unconfirmable?:
            refusal = Refusal(.gatewayTimeout, "Kiosk's proxy holds an answer for \(shownURL), but its upstream asks that it "
                              + "never be given unconfirmed (must-revalidate or no-cache), and confirming it failed: " + refusal.message)
        case .changed?:
            refusal = Refusal(.gatewayTimeout, "Kiosk's proxy holds an answer for \(shownURL), but a request that changed it "
                              + "succeeded after it was stored, so it is given only once the upstream confirms it (the `fallback` "
                              + "mode and --offline give it when the upstream cannot answer), and confirming it failed: " + refusal.message)
        case .otherVariants(let names)?:
            // As a server spells them (Accept-Language), from the names stored lowercased.
            let spelled = names.map { $0.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-") }
            refusal = Refusal(refusal.status, "Kiosk's proxy holds answers for \(shownURL), but for other values of the request "
                              + "headers they vary by (Vary: \(spelled.isEmpty ? "*" : spelled.joined(separator: ", "))), not this request's, "
                              + "and the upstream could not be asked: " + refusal.message)
        case .otherCredentials?:
            refusal = Refusal(refusal.status, "Kiosk's proxy holds answers for \(shownURL), but each for other credentials (an "
                              + "Authorization, a Cookie, an API key's header: a session's cookie that changed since is another), and one "
                              + "identity's answer is never given to another; the upstream could not be asked: " + refusal.message)
        case .noneStored?:
            refusal = Refusal(refusal.status, "Kiosk's proxy has no answer stored for \(shownURL) to give in its place (none came "
                              + "through it yet, or none could be kept), and the upstream could not be asked: " + refusal.message)
        case nil:
            break
        }
        refusal.cacheStatus = marked?.cacheStatus
        return refusal
    }

    /// The fields of a message without those that belong to one connection (`HTTPSyntax.endToEnd`), with room for
    /// what the proxy adds after (Via, a length, Date), so that the list is made once.
    private static func forwardable(_ headers: some Collection<(name: String, value: String)>) -> [(name: String, value: String)] {
        HTTPSyntax.endToEnd(headers, reserving: 3)
    }

    /// An app's request fields as forwarded: end to end ones only, and without Kiosk's own cookies (`KioskCookies`), which a
    /// browser sends to an app on the host Kiosk's pages are on, whatever its port, and which are Kiosk's secrets.
    private static func forwardable(_ headers: HTTPHeaders) -> [(name: String, value: String)] {
        var fields = forwardable(headers.lazy.map { (name: $0.name, value: $0.value) })
        for index in fields.indices.reversed() where HTTPHeaderFields.sameName(fields[index].name, "cookie") {
            if let kept = KioskCookies.withoutKiosks(fields[index].value) { fields[index].value = kept } else { fields.remove(at: index) }
        }
        return fields
    }

    /// Adds the proxy's member to `Via` (RFC 9110 §7.6.3) — with `received`, the version the message came in, when it
    /// is not `via`'s own 1.1 (an HTTP/1.0 app's request) — at the end of the last `Via` line: the lines of a field are
    /// one list, in order (§5.3), and each recipient appends itself after the ones before it.
    private static func appendVia(_ fields: inout [(name: String, value: String)], via: String, received: HTTPVersion? = nil) {
        var via = via
        if let received, received != .http1_1, via.hasPrefix("1.1 ") {
            via = (received.major >= 2 ? "\(received.major)" : "\(received.major).\(received.minor)") + via.dropFirst(3)
        }
        if let index = fields.lastIndex(where: { HTTPHeaderFields.sameName($0.name, "via") }) {
            fields[index].value += ", " + via
        } else {
            fields.append((name: "Via", value: via))
        }
    }

    /// A request target as shown in an answer: at most 200 characters, no control characters.
    private static func shown(_ text: String) -> String {
        String(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(200).map(Character.init))
    }
}
