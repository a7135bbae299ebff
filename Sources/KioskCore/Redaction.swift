public import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Removes secrets from URLs and headers before they reach a log, a page, an error or a file.
public struct Redactor: Sendable, Hashable {
    /// The placeholder secrets are replaced with.
    public static let placeholder = "<redacted>"
    /// Query items whose values are secrets (case-insensitive); JSON bodies' fields of these names too, but for those
    /// that name ordinary data in a document (`JSONFields`).
    public var queryItems: Set<String> {
        didSet { jsonFields = JSONFields(queryItems.union(headers)) }
    }
    /// The JSON fields whose string values are secrets, and the search that tells a body naming none at once.
    private var jsonFields: JSONFields
    /// Header names whose values are secrets (case-insensitive); JSON bodies' fields of these names too (an echo
    /// service's `{"headers": {"Authorization": …}}`).
    public var headers: Set<String> {
        didSet { jsonFields = JSONFields(queryItems.union(headers)) }
    }
    /// Secret values (API keys) replaced wherever they appear — in a URL, a header or a body — so a
    /// key echoed by an upstream, or sent under a name not on the lists, still never leaves Kiosk.
    /// Values shorter than 6 characters are ignored: they would match ordinary text.
    public var secretValues: Set<String> = [] {
        didSet { secretsLongestFirst = Self.longestFirst(secretValues) }
    }
    /// `secretValues`, longest first, so that a key that contains another is replaced whole, each ready to be searched
    /// for; kept because every captured header and body is scrubbed.
    private var secretsLongestFirst: [SecretScan] = [] {
        didSet { scan = SecretScan(secretsLongestFirst.flatMap(\.needles)) }
    }
    /// All of them searched for in one pass: what every captured header and body meets first.
    private var scan = SecretScan([])

    /// The default list: NYT's `api-key`, Marvel's `apikey`, `hash` and `ts`, the names apps put their keys, tokens and
    /// signatures under (`api_key`, Google's `key`, `token`, OAuth's `access_token`, `refresh_token`, `id_token` and
    /// `client_secret`, `password` and `passwd`, `secret`, Firebase's `auth`, `session_token`, `private_key`,
    /// `sig`/`signature`, a pre-signed S3 URL's `X-Amz-Signature`, `X-Amz-Credential` and
    /// `X-Amz-Security-Token`, OAuth's authorization `code` and PKCE `code_verifier`, a `jwt`, a `session` id, and the
    /// camel-case and dashed spellings of an access, auth, API or refresh token and a client secret),
    /// and credential headers (Azure's and Google's key headers, GitLab's `Private-Token`, CSRF tokens, and the
    /// `X-Access-Token`, `X-Session-Token` and `X-Refresh-Token` of many an API, among them).
    public static let standard = Redactor(
        queryItems: ["api-key", "apikey", "hash", "ts", "api_key", "key", "token", "access_token", "refresh_token", "id_token",
                     "client_secret", "password", "passwd", "secret", "auth", "session_token", "private_key", "sig", "signature",
                     "x-amz-signature", "x-amz-credential", "x-amz-security-token", "code", "code_verifier", "jwt", "session",
                     "sessionid", "session_id", "accesstoken", "access-token", "auth_token", "authtoken", "auth-token", "api_token",
                     "apitoken", "refreshtoken", "clientsecret"],
        headers: ["authorization", "cookie", "set-cookie", "proxy-authorization", "x-api-key", "x-auth-token", "api-key",
                  "x-goog-api-key", "x-amz-security-token", "x-access-token", "x-session-token", "x-refresh-token",
                  "private-token", "x-csrf-token", "x-xsrf-token"]
    )

    /// The request fields that say who asks, besides Authorization and Cookie: the credential headers the standard
    /// redaction hides (`x-api-key`, `api-key`, `x-auth-token`, Google's and AWS's), lowercased and sorted. An answer made
    /// for one key is another identity's as much as one made for another bearer token. (Proxy-Authorization is a proxy's
    /// own, never sent on; Set-Cookie is an answer's.)
    public static let identityFields = standard.headers.subtracting(notIdentity).sorted()

    /// Whether a request field of this name (lowercased) says who asks besides Authorization and Cookie: one of
    /// `identityFields`, or a name the standard redaction takes for a secret's by its last word (`X-Client-Secret`),
    /// but for a signature or a DPoP proof (made anew for each request, over its time and body), a session's id (an
    /// analytics or protocol session, made anew at each launch) and an App Check token (an app's attestation, renewed
    /// hourly): they say nothing of who asks, and counted as identities they would keep every request from matching any
    /// answer stored before (offline after a relaunch, nothing would be found).
    public static func isIdentityField(_ name: String) -> Bool {
        standard.namesSecretHeader(name) && !notIdentity.contains(name)
            && secretWord(ofHeader: name.replacingOccurrences(of: "_", with: "-"))?.hasSuffix("signature") != true
            && !madeAnewOften.contains(name) && !name.hasSuffix("session-id") && !name.hasSuffix("sessionid")
    }

    /// Whether a query item named `name` (decoded) is one a URL's redaction hides: one of `listed` (the redactor's
    /// `queryItems`, lowercased), or a name whose last word says it holds a secret (`db_secret`, `githubToken`), as the log
    /// reads it. What a rule's URL pattern leaves out and matching ignores, so that a rule made of a logged URL matches.
    public static func isSecretQueryName(_ name: String, listed: Set<String>) -> Bool {
        listed.contains(name.lowercased()) || JSONFields.endsInSecretWord(JSONFields.normalized(name))
    }

    /// Secret fields made anew too often to say who asks (see `isIdentityField`).
    private static let madeAnewOften: Set<String> = ["dpop", "x-firebase-appcheck"]

    /// Secret fields that are no identity's besides the two counted first (a proxy's own credential, an answer's field).
    private static let notIdentity: Set<String> = ["authorization", "cookie", "set-cookie", "proxy-authorization"]

    public init(queryItems: Set<String>, headers: Set<String>, secretValues: Set<String> = []) {
        self.queryItems = Set(queryItems.map { $0.lowercased() })
        self.headers = Set(headers.map { $0.lowercased() })
        jsonFields = JSONFields(self.queryItems.union(self.headers))
        self.secretValues = secretValues.filter { $0.count >= 6 }
        secretsLongestFirst = Self.longestFirst(self.secretValues)
        scan = SecretScan(secretsLongestFirst.flatMap(\.needles))
    }

    private static func longestFirst(_ secrets: Set<String>) -> [SecretScan] {
        Set(secrets.flatMap(spellings)).sorted { ($0.utf8.count, $0) > ($1.utf8.count, $1) }.map { SecretScan([Array($0.utf8)]) }
    }

    /// The ways an upstream may send a secret back besides as it is: in capitals or small letters (a hex digest, Marvel's
    /// `hash`, in capitals is the same one; and a search index keeps words in small letters, so any echo in capitals of a
    /// key so written would be the key there), and in base64 (a header carrying it encoded). A JSON body's escapes
    /// (`\u0061`) are undone where they are read (`scrub(_:)`), as they may spell any character of it either way.
    private static func spellings(_ secret: String) -> [String] {
        var spellings = [secret, secret.uppercased(), secret.lowercased()]
        // As a URL carries it (a key of `+`, `/`, `=` sent as `%2B%2F%3D`, which an upstream's echo of its path repeats),
        // in both cases of hex digits.
        if let encoded = secret.addingPercentEncoding(withAllowedCharacters: unreserved), encoded != secret {
            spellings.append(encoded)
            spellings.append(lowercasingEscapes(encoded))
        }
        let base64 = Data(secret.utf8).base64EncodedString()
        spellings.append(base64)
        spellings.append(String(base64.prefix { $0 != "=" }))
        return spellings
    }

    /// RFC 3986's unreserved characters: what a URL carries as it is; any other is escaped.
    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `text` with the hex digits of its `%XX` escapes in small letters.
    private static func lowercasingEscapes(_ text: String) -> String {
        var result = "", escape = 0
        for character in text {
            if character == "%" { escape = 2; result.append(character) } else if escape > 0 {
                escape -= 1
                result += character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A copy that also replaces these secret values wherever they appear.
    public func hiding(_ values: some Sequence<String>) -> Redactor {
        var copy = self
        copy.secretValues.formUnion(values.filter { $0.count >= 6 })
        return copy
    }

    /// The values a request sends under secret names — its secret headers' (and, after an auth scheme such as `Bearer`,
    /// the credentials alone; a cookie's value alone), its secret query items' and its URL's password — to hide wherever
    /// else they appear (an upstream echoing them in its body). Those of fewer than 6 characters are left out, as `hiding`
    /// leaves them.
    public func credentials(in fields: HTTPHeaderFields, url: URL) -> [String] {
        var values: [String] = []
        for field in fields where namesSecretHeader(field.name.lowercased()) {
            let value = field.value.trimmingCharacters(in: .whitespaces)
            values.append(value)
            if let space = value.firstIndex(of: " ") {
                let credential = value[value.index(after: space)...].trimmingCharacters(in: .whitespaces)
                values.append(credential)
                // Basic's `user:password`, which an echo service may say decoded (httpbin's /basic-auth), and the password.
                if value[..<space].lowercased() == "basic", let pair = Data(base64Encoded: credential).flatMap({ String(data: $0, encoding: .utf8) }) {
                    values.append(pair)
                    if let colon = pair.firstIndex(of: ":") { values.append(String(pair[pair.index(after: colon)...])) }
                }
            }
            // `a=1; sid=…`: an echo service lists each cookie's value on its own.
            if HTTPHeaderFields.sameName(field.name, "Cookie") {
                for cookie in value.split(separator: ";") {
                    guard let equals = cookie.firstIndex(of: "=") else { continue }
                    let sent = cookie[cookie.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                    values.append(sent)
                    // A server reads a cookie's %XX escapes (Express's `s%3A…` session): an echo says it decoded.
                    if sent.utf8.contains(UInt8(ascii: "%")), let decoded = sent.removingPercentEncoding, decoded != sent { values.append(decoded) }
                }
            }
        }
        // A token sent as a WebSocket subprotocol (what `redactSubprotocols` hides), echoed by a server that lists them.
        for field in fields where HTTPHeaderFields.sameName(field.name, "Sec-WebSocket-Protocol") {
            for item in field.value.split(separator: ",") {
                let text = item.trimmingCharacters(in: .whitespaces)
                guard Self.redactSubprotocols(text) != text else { continue }
                values.append(text)
                // (and Kubernetes' token alone, as its server may say it)
                if text.lowercased().hasPrefix(Self.bearerSubprotocol) { values.append(String(text.dropFirst(Self.bearerSubprotocol.count))) }
            }
        }
        if let password = url.password(percentEncoded: false) { values.append(password) }
        // The items a URL's redaction hides (`namesSecret`: `token`, `Token`, `user[password]`), read from the query's
        // text: URLComponents' parse of every query was a fifth of what storing a proxied answer cost the event loops.
        if let query = url.query(percentEncoded: true) { values += secretValues(inQuery: Substring(query)) }
        // The previous page's address says its own secrets (an OAuth callback's `access_token`), which an echo repeats.
        if let referer = fields["Referer"], let mark = referer.firstIndex(of: "?") {
            values += secretValues(inQuery: referer[referer.index(after: mark)...].split(separator: "#", maxSplits: 1).first ?? "")
            if let hash = referer.firstIndex(of: "#") { values += secretValues(inQuery: referer[referer.index(after: hash)...]) }
        }
        return values.filter { $0.count >= 6 }
    }

    /// The values of a query's (or a fragment's) secret items, as sent and, when escaped, decoded as a server reads them
    /// (an echo of the raw query, httpbin's `url`, keeps them as sent).
    private func secretValues(inQuery query: Substring) -> [String] {
        guard query.utf8.contains(UInt8(ascii: "=")) else { return [] }
        var values: [String] = []
        for pair in Self.pairs(query) where namesSecret(pair) {
            guard let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let value = String(pair[pair.utf8.index(after: equals)...])
            values.append(value)
            if value.utf8.contains(UInt8(ascii: "%")), let decoded = value.removingPercentEncoding, decoded != value { values.append(decoded) }
        }
        return values
    }

    /// The values `request` sends under secret names, in its fields, its URL and its body (`credentials(in:url:)` and
    /// `credentials(inBody:contentType:)`), to hide wherever else they appear.
    public func credentials(of request: HTTPRequest) -> [String] {
        let fromBody = request.body.map { credentials(inBody: $0, contentType: request.headers["Content-Type"]) } ?? []
        return credentials(in: request.headers, url: request.url) + fromBody
    }

    /// This redactor hiding as well what an exchange of `request` may echo: its own secrets (a signature Kiosk made) and
    /// its credentials (`credentials(of:)`), with `extra` ones (a streamed upload's): what the log keeps of the exchange,
    /// whatever records it (the capture, an edit at a breakpoint).
    public func hidingCredentials(of request: HTTPRequest, extra: [String] = []) -> Redactor {
        let secrets = Array(request.secrets) + credentials(of: request) + extra
        return secrets.isEmpty ? self : hiding(secrets)
    }

    /// The URL as text with secret query values (and any password) replaced by `<redacted>`.
    /// Works on the text so that nothing else about the URL (order, encoding) changes.
    public func redact(_ url: URL) -> String {
        scrub(redactQuery(url))
    }

    /// Text with every secret value replaced (matched as UTF-8 bytes, so a key followed by a
    /// combining mark is still found).
    public func scrub(_ text: String) -> String {
        guard !secretsLongestFirst.isEmpty else { return text }
        // Every captured header value is scrubbed: a byte scan first, as a key is almost never there.
        var text = text
        // An upstream's message quoting JSON may spell a key with escapes.
        guard text.withUTF8({ scan.occurs(in: UnsafeRawBufferPointer($0)) || Self.holdsBackslash(UnsafeRawBufferPointer($0)) })
        else { return text }
        // Whole keys are whole UTF-8 sequences, so replacing their bytes leaves valid UTF-8.
        return String(decoding: scrub(Data(text.utf8)), as: UTF8.self)
    }

    /// Bytes (a body) with every secret value replaced, also where JSON's escapes spell it (`\u0061pikey…`, any of its
    /// characters either way); unchanged when none occurs.
    public func scrub(_ data: Data) -> Data {
        let scrubbed = scrubVerbatim(data)
        guard !secretsLongestFirst.isEmpty,
              scrubbed.withUnsafeBytes(Self.holdsBackslash) else { return scrubbed }
        return scrubEscaped(scrubbed)
    }

    /// Whether the bytes hold a backslash, which starts every JSON escape (memchr: most bodies have none).
    static func holdsBackslash(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        return memchr(base, Int32(UInt8(ascii: "\\")), bytes.count) != nil
    }

    /// `data` with each stretch whose JSON escapes spell a secret replaced: the escapes are undone into a copy, which is
    /// searched; only when a secret is there is the copy made again knowing where each of its bytes came from (four
    /// bytes a byte).
    private func scrubEscaped(_ data: Data) -> Data {
        guard JSONUnescaped(data, locating: false).bytes.withUnsafeBytes({ scan.occurs(in: $0) }) else { return data }
        let unescaped = JSONUnescaped(data, locating: true)
        var stretches: [Range<Int>] = []
        for secret in secretsLongestFirst {
            let needle = secret.needles[0]
            var index = 0
            while index + needle.count <= unescaped.bytes.count {
                guard unescaped.bytes[index] == needle[0], unescaped.bytes[index..<index + needle.count].elementsEqual(needle) else {
                    index += 1
                    continue
                }
                let stretch = unescaped.original(of: index..<index + needle.count)
                // A longer secret found first keeps its stretch whole.
                if !stretches.contains(where: { $0.overlaps(stretch) }) { stretches.append(stretch) }
                index += needle.count
            }
        }
        // The last first, so that the offsets of those before still hold.
        var result = data
        let replacement = Data(Self.placeholder.utf8)
        for stretch in stretches.sorted(by: { $0.lowerBound > $1.lowerBound }) {
            result.replaceSubrange(result.startIndex + stretch.lowerBound..<result.startIndex + stretch.upperBound, with: replacement)
        }
        return result
    }

    /// `data` with every secret's own bytes replaced.
    private func scrubVerbatim(_ data: Data) -> Data {
        // One pass for all the keys first: a key is almost never there.
        guard data.withUnsafeBytes({ scan.occurs(in: $0) }) else { return data }
        var result = data
        for secret in secretsLongestFirst {
            // Some key is there: which, by each key's own scan, as `Data.range(of:)` is a slow byte-by-byte search on Linux.
            guard result.withUnsafeBytes({ secret.occurs(in: $0) }) else { continue }
            let needle = Data(secret.needles[0])
            let replacement = Data(Self.placeholder.utf8)
            var searchStart = result.startIndex
            while let range = result.range(of: needle, in: searchStart..<result.endIndex) {
                result.replaceSubrange(range, with: replacement)
                searchStart = range.lowerBound + replacement.count
            }
        }
        return result
    }

    private func redactQuery(_ url: URL) -> String {
        var text = url.absoluteString
        if let password = url.password(percentEncoded: true), !password.isEmpty,
           let range = text.range(of: ":\(password)@") {
            text.replaceSubrange(range, with: ":\(Self.placeholder)@")
        }
        return redactQuery(text)
    }

    /// A URL or a relative reference as text (a `Location` field's) with its secret query values replaced, and those of
    /// a fragment written as pairs: an OAuth implicit grant's redirect carries its token there (`#access_token=…`).
    private func redactQuery(_ text: String) -> String {
        // Found among the bytes (both are ASCII, so each index falls on a character): walking the characters to find
        // them was most of this function's time on every captured URL.
        let utf8 = text.utf8
        let hash = utf8.firstIndex(of: UInt8(ascii: "#"))
        let questionMark = utf8[..<(hash ?? utf8.endIndex)].firstIndex(of: UInt8(ascii: "?"))
        guard questionMark != nil || hash != nil else { return text }
        let afterQuery = hash ?? text.endIndex
        // Every captured URL comes through here: one that names no secret (nearly all) is kept as it is.
        let query = questionMark.flatMap { redactPairs(text[text.index(after: $0)..<afterQuery]) }
        let fragment = hash.flatMap { redactPairs(text[text.index(after: $0)...]) }
        guard query != nil || fragment != nil else { return text }
        var result = query.map { String(text[...questionMark!]) + $0 } ?? String(text[..<afterQuery])
        if let hash { result += fragment.map { "#" + $0 } ?? String(text[hash...]) }
        return result
    }

    /// A field's address (a `Location`, a `Refresh`'s `0; url=…`) with its secret query values and its password replaced.
    private func redactAddress(_ text: String) -> String {
        if text.utf8.contains(UInt8(ascii: "@")), let url = URL(string: text.trimmingCharacters(in: .whitespaces)),
           url.password(percentEncoded: true)?.isEmpty == false {
            return redactQuery(url)
        }
        return redactQuery(text)
    }

    /// A `Link` field (RFC 8288) with each `<address>` it lists redacted as an address is.
    private func redactLinks(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "<")) else { return text }
        var result = "", rest = Substring(text)
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open] + redactAddress(String(rest[rest.index(after: open)..<close])) + ">"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// `name=value&…` (a query, a form) with the values of secret names replaced, each separator kept as written; nil when
    /// it names no secret.
    private func redactPairs(_ text: Substring) -> String? {
        let pairs = Self.pairs(text)
        guard pairs.contains(where: namesSecret) else { return nil }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for pair in pairs {
            // The separator before it, as written (`&`, or the `;` some servers also split on).
            if pair.startIndex > text.startIndex { result.append(Character(Unicode.Scalar(text.utf8[text.utf8.index(before: pair.startIndex)]))) }
            guard namesSecret(pair) else {
                result += pair
                continue
            }
            let name = pair.utf8.firstIndex(of: UInt8(ascii: "=")).map { pair[..<$0] } ?? pair
            result += "\(name)=\(Self.placeholder)"
        }
        return result
    }

    /// `name=value&…` cut at each `&` byte, and at each `;` a pair follows (`x=1;api_key=…`: some servers split a query
    /// there as well, so a secret after one reaches them; not inside a value, `password=p;ss`, whose tail would be shown),
    /// empty pieces kept. By bytes, as a server reads a query or a form: splitting the text's characters (each found by
    /// Unicode's grapheme rules) was most of the time the request log's writer spent redacting a captured URL.
    private static func pairs(_ text: Substring) -> [Substring] {
        let semicolon = UInt8(ascii: ";")
        var result: [Substring] = []
        for piece in text.utf8.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            guard piece.contains(semicolon) else {
                result.append(Substring(piece))
                continue
            }
            var start = piece.startIndex
            var index = piece.startIndex
            while let cut = piece[index...].firstIndex(of: semicolon) {
                let next = piece.index(after: cut)
                if piece[next...].prefix(while: { $0 != semicolon }).contains(UInt8(ascii: "=")) {
                    result.append(Substring(piece[start..<cut]))
                    start = next
                }
                index = next
            }
            result.append(Substring(piece[start...]))
        }
        return result
    }

    /// A body as the log, a page or an export may keep it: every secret value replaced (`scrub`), and the values of secret
    /// fields when `contentType` says it is a form (`application/x-www-form-urlencoded`: an OAuth token request's
    /// `refresh_token`, a login's `password`) or JSON (a login's `{"password": …}`, an OAuth token answer's
    /// `access_token`), and in any text the secrets it spells out (`redactingTextSecrets`: an address's `?api_key=…`, a
    /// JSON Web Token); a body naming none is returned as it is.
    public func redactBody(_ body: Data, contentType: String?) -> Data {
        let type = contentType?.lowercased() ?? ""
        let fields = redactFields(body, contentType: contentType)
        return scrub(Self.readsAsText(type) ? redactingTextSecrets(fields) : fields)
    }

    /// `redactBody` of a body sent in `contentEncoding` (its `Content-Encoding` field): one in a coding Kiosk reads
    /// (gzip, deflate, br) is decoded, redacted and, when that changed it, coded again — an upstream echoes an app's token
    /// inside a gzip answer as readily as in a plain one. A brotli body that held a secret, and one that does not decode
    /// (cut at the capture's limit, or corrupt), are withheld (empty): what they hide cannot be looked for or hidden. One
    /// that is plain text, not in its coding at all (a server's JSON labelled gzip, a bug worth seeing), is redacted as the
    /// plain text it is; bytes that are not text may be another coding (raw deflate, brotli labelled gzip) and are withheld.
    /// A coding Kiosk cannot read (zstd) goes as it came, unreadable to every page too. One whose content is larger than
    /// `decodingAtMost` is withheld: what it hides is not looked for past that.
    public func redactBody(_ body: Data, contentType: String?, contentEncoding: String?,
                           decodingAtMost limit: Int = ContentCoding.maximumDecodedBytes) -> Data {
        guard let coding = ContentCoding.single(contentEncoding) else { return redactBody(body, contentType: contentType) }
        guard ContentCoding.decodes(coding), !body.isEmpty else { return body }
        guard let decoded = ContentCoding.decoded(body, coding: coding, maximumBytes: limit) else {
            let isPlainText = !ContentCoding.carries(body, coding: coding) && String(data: body, encoding: .utf8) != nil
            return isPlainText ? redactBody(body, contentType: contentType) : Data()
        }
        let redacted = redactBody(decoded, contentType: contentType)
        guard redacted != decoded else { return body }
        return ContentCoding.encoded(redacted, coding: coding) ?? Data()
    }

    private func redactFields(_ body: Data, contentType: String?) -> Data {
        let type = contentType?.lowercased() ?? ""
        if let reading = Self.jsonReading(type, of: body) {
            return Self.replacing(secretValues(in: body, reading, inLists: true), in: body) ?? body
        }
        if type.hasPrefix("application/x-www-form-urlencoded") {
            guard let text = String(data: body, encoding: .utf8), let redacted = redactPairs(Substring(text)) else { return body }
            return Data(redacted.utf8)
        }
        if type.hasPrefix("multipart/form-data") {
            // The boundary is case-sensitive: read from the field as sent.
            return Self.replacing(secretParts(of: body, contentType: contentType ?? type), in: body) ?? body
        }
        return body
    }

    /// Where the values of `body`'s secret JSON fields are, in order and apart. Text is walked both line by line (a quote
    /// left open on its line, in an event stream's comment, does not hide the events after it) and as JSON (a line feed
    /// inside a string does not put the quotes after it out of step): what either finds is hidden.
    private func secretValues(in body: Data, _ reading: JSONReading, inLists: Bool) -> [Range<Int>] {
        let asJSON = jsonFields.values(in: body, inLists: inLists)
        guard reading == .inText else { return asJSON }
        return Self.merged(asJSON + jsonFields.values(in: body, lineByLine: true, inLists: inLists))
    }

    /// `ranges` in order, those that overlap or touch joined into one: what `replacing` takes.
    static func merged(_ ranges: [Range<Int>]) -> [Range<Int>] {
        var merged: [Range<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// How a body carries JSON.
    private enum JSONReading { case json, inText }

    /// How a body of this (lowercased) type is looked through for JSON's secret fields, nil when it is not: as JSON for
    /// JSON's own types; line by line for the text that most often carries JSON without saying so — an event stream's
    /// `data:` lines, JSON sent as text/plain (a beacon, a misconfigured server); as JSON for a body of any other label
    /// that starts as JSON does. (HTML pages and scripts do not, and are not read for JSON: a page's label
    /// `"password":"Password"` would withhold a whole brotli page, which cannot be coded again here.)
    private static func jsonReading(_ type: String, of body: Data) -> JSONReading? {
        if type.contains("json") { return .json }
        if type.hasPrefix("text/plain") || type.hasPrefix("text/event-stream") { return .inText }
        // A body that starts as JSON's object or array does is read as JSON whatever its label says: none, bytes
        // (`application/octet-stream`), or a form's (what Python's `urlopen(url, data=json.dumps(…))` sends). The
        // console shows it as JSON too. (A form, an HTML page or a multipart body never starts so.)
        let first = body.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[") ? .json : nil
    }

    /// The values of a request body's secret fields — a form's (`password=…`), a multipart form's parts, a JSON body's
    /// strings (`{"password": …}`) — to hide wherever else they appear (an upstream echoing the form it got). Those of
    /// fewer than 6 characters are left out, as `hiding` leaves them.
    public func credentials(inBody body: Data, contentType: String?) -> [String] {
        guard !body.isEmpty else { return [] }
        let type = contentType?.lowercased() ?? ""
        var values: [String] = []
        if let reading = Self.jsonReading(type, of: body) {
            // (The strings right under a secret's name only: those of a list under one, hidden where they stand, are not
            // hidden wherever else they appear, where a short word of a list would hide ordinary text.)
            values = secretValues(in: body, reading, inLists: false).compactMap { range in
                // The string as JSON reads it, escapes undone.
                let quoted = Data("\"".utf8) + body[(body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound)] + Data("\"".utf8)
                return try? JSONDecoder().decode(String.self, from: quoted)
            }
        } else if type.hasPrefix("application/x-www-form-urlencoded") {
            guard let text = String(data: body, encoding: .utf8) else { return [] }
            for pair in Self.pairs(Substring(text)) where namesSecret(pair) {
                guard let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) else { continue }
                let value = String(pair[pair.utf8.index(after: equals)...]).replacingOccurrences(of: "+", with: " ")
                values.append(value.removingPercentEncoding ?? value)
            }
        } else if type.hasPrefix("multipart/form-data") {
            values = secretParts(of: body, contentType: contentType ?? type).compactMap { String(data: body[(body.startIndex + $0.lowerBound)..<(body.startIndex + $0.upperBound)], encoding: .utf8) }
        }
        // A form sent as plain text (a beacon's `token=…`), hidden in the log as a form's is, is hidden where it is echoed.
        if type.hasPrefix("text/plain") { values += secretPairValues(in: body) }
        return values.filter { $0.count >= 6 }
    }

    /// `body` with each of `ranges` (offsets, in order, apart) replaced by the placeholder; nil when there are none.
    static func replacing(_ ranges: [Range<Int>], in body: Data) -> Data? {
        guard !ranges.isEmpty else { return nil }
        var result = Data()
        result.reserveCapacity(body.count)
        var copied = body.startIndex
        let placeholder = Data(Redactor.placeholder.utf8)
        for range in ranges {
            result.append(body[copied..<(body.startIndex + range.lowerBound)])
            result.append(placeholder)
            copied = body.startIndex + range.upperBound
        }
        result.append(body[copied...])
        return result
    }

    /// Where the contents of a multipart form's secret fields are (RFC 7578): the parts whose `Content-Disposition` names
    /// a secret field (`name="password"`) and no file. A body cut short (the log's first MB) is read as far as it goes.
    private func secretParts(of body: Data, contentType: String) -> [Range<Int>] {
        guard let boundary = Self.boundary(of: contentType) else { return [] }
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let headersEnd: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A]
        var ranges: [Range<Int>] = []
        var next = Self.find(delimiter, in: bytes, from: 0)
        while let start = next {
            let partStart = start + delimiter.count
            // `--boundary--` closes the form.
            if partStart + 1 < bytes.count, bytes[partStart] == UInt8(ascii: "-"), bytes[partStart + 1] == UInt8(ascii: "-") { break }
            guard let headerEnd = Self.find(headersEnd, in: bytes, from: partStart) else { break }
            let contentStart = headerEnd + 4
            next = Self.find([0x0D, 0x0A] + delimiter, in: bytes, from: contentStart)
            let contentEnd = next ?? bytes.count
            let headers = String(decoding: bytes[partStart..<headerEnd], as: UTF8.self)
            if let name = Self.dispositionParameter("name", in: headers), Self.dispositionParameter("filename", in: headers) == nil,
               namesSecret(Substring(name + "=")), contentStart < contentEnd {
                ranges.append(contentStart..<contentEnd)
            }
            next = next.map { $0 + 2 }
        }
        return ranges
    }

    /// A multipart type's `boundary` parameter, unquoted.
    private static func boundary(of contentType: String) -> String? {
        HTTPSyntax.parameter("boundary", in: contentType).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A parameter of a part's `Content-Disposition` line (`name`, `filename`), unquoted; nil when the line has none.
    private static func dispositionParameter(_ wanted: String, in headers: String) -> String? {
        // CR LF is one Character, a newline.
        headers.split(whereSeparator: \.isNewline).first { $0.lowercased().hasPrefix("content-disposition:") }
            .flatMap { HTTPSyntax.parameter(wanted, in: $0) }
    }

    /// Where `needle` first occurs in `bytes` at or after `start`.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            guard let first = bytes[index...(bytes.count - needle.count)].firstIndex(of: needle[0]) else { return nil }
            if bytes[first..<(first + needle.count)].elementsEqual(needle) { return first }
            index = first + 1
        }
        return nil
    }

    /// Whether the query item `pair` (`name=value`) is a secret: its name, decoded as a form's field name and
    /// lowercased, is one of `queryItems`.
    func namesSecret(_ pair: Substring) -> Bool {
        let name = pair.utf8.prefix { $0 != UInt8(ascii: "=") }
        // A name of ASCII without escapes (nearly every one) is lowercased byte by byte: Foundation's percent-decoding
        // and Unicode lowercasing cost more than the rest of capturing an exchange's URL. Any other name takes them, as
        // it must: a percent-escape, or a letter such as the Kelvin sign, may lowercase to an ASCII secret's name.
        if name.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "[") }) {
            return queryItems.contains(String(decoding: name.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self))
                || JSONFields.endsInSecretWord(JSONFields.normalized(name))
        }
        let raw = String(Substring(name))
        // Spaces around the name (`+token`) are trimmed: a server may trim them too.
        // So are control characters (`apikey%00`), which a server may drop as well.
        let decoded = (raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw).lowercased()
            .trimmingCharacters(in: .whitespaces.union(.controlCharacters))
        // A form's array or map field (`token[]`, `user[password]`: PHP's and Rails' spelling) is a secret when its name
        // or a key inside its brackets is.
        let secret = { (name: String) in queryItems.contains(name) || JSONFields.endsInSecretWord(JSONFields.normalized(name)) }
        return secret(decoded) || decoded.contains("[") && decoded.split(whereSeparator: { $0 == "[" || $0 == "]" }).contains { secret(String($0)) }
    }

    /// Whether a header field of this name (lowercased) holds a secret: one of `headers`, or a name whose last word
    /// says so (`Secret`, `X-Secret`, `X-Client-Secret`, `CF-Access-Client-Secret`, `X-Auth-Password`, `X-Request-Signature`,
    /// `X-Hub-Signature-256`, `X-Authorization`, `X-CSRFToken`, `X-Shop-Api-Key`, `X-Secret-Key`, `X-AccessKey`): an app's own
    /// credential headers are seldom on any list.
    public func namesSecretHeader(_ name: String) -> Bool {
        if headers.contains(name) { return true }
        // Underscores for hyphens (`access_token`, `X_API_KEY`: nginx drops such fields by default, but an app's own server
        // may take them, and they are sent) name the same secrets.
        if name.utf8.contains(UInt8(ascii: "_")) { return namesSecretHeader(name.replacingOccurrences(of: "_", with: "-")) }
        return Self.secretEndings.contains { name.hasSuffix($0) } || Self.secretNames.contains(name)
            || Self.secretWord(ofHeader: name) != nil
    }

    /// The word of a header's name (lowercased, hyphenated) that says it holds a secret, nil when none does: its last word
    /// (before a number, as `X-Hub-Signature-256`'s digest size) when that is a secret's word or ends in one (`csrftoken`,
    /// `clientsecret`), or a key after a credential's word (`X-Secret-Key`, `X-Access-Key`, `X-Key`, `X-AccessKey`; not
    /// `Idempotency-Key`, `Surrogate-Key` or `Sec-WebSocket-Key`). Read by bytes: it runs for every field of every exchange.
    static func secretWord(ofHeader name: String) -> Substring? {
        let utf8 = name.utf8
        // The word that ends at `end`, and where it starts (after a `-`, an ASCII byte: a character boundary).
        func word(endingAt end: String.Index) -> (word: Substring, start: String.Index) {
            let start = utf8[..<end].lastIndex(of: UInt8(ascii: "-")).map { utf8.index(after: $0) } ?? utf8.startIndex
            return (name[start..<end], start)
        }
        var (last, start) = word(endingAt: utf8.endIndex)
        if start > utf8.startIndex, !last.isEmpty, last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            (last, start) = word(endingAt: utf8.index(before: start))
        }
        guard !last.isEmpty else { return nil }
        func ends(_ text: Substring, with suffix: String) -> Bool {
            text.utf8.count >= suffix.utf8.count && text.utf8.suffix(suffix.utf8.count).elementsEqual(suffix.utf8)
        }
        if secretLastWords.contains(String(last)) || secretWordEndings.contains(where: { ends(last, with: $0) }) { return last }
        if last == "key" {
            guard start > utf8.startIndex else { return last }
            return keyQualifiers.contains(String(word(endingAt: utf8.index(before: start)).word)) ? last : nil
        }
        // A compound ending in "key" (`accesskey`) says so only after a credential's word: `monkey` and `hotkey` do not.
        guard ends(last, with: "key") else { return nil }
        return keyQualifiers.contains(String(last.dropLast(3))) ? last : nil
    }

    /// The last words of a header's name that make it a secret's (`X-Auth`, `X-Supabase-Auth` carry tokens as well).
    private static let secretLastWords: Set<String> = ["auth", "authentication"]
    /// The endings of a header's last word that make it a secret's, a word of its own or a compound's end (`csrftoken`).
    /// (Not `credentials`: `Access-Control-Allow-Credentials` is CORS's yes or no.)
    private static let secretWordEndings = ["token", "secret", "password", "passwd", "signature", "apikey", "credential", "sessionid",
                                            "authorization"]
    /// The words that make a `Key` after them (`X-Access-Key`) or written together with it (`X-AccessKey`) a credential's;
    /// `x` and `api` too (`X-Key`, `Api-Key`). Any other key (a cache's, a retry's, a handshake's nonce) is an ordinary field.
    private static let keyQualifiers: Set<String> = ["x", "api", "access", "secret", "private", "master", "client", "consumer", "license",
                                                     "licence", "subscription", "app", "auth", "account", "admin", "service", "signing",
                                                     "encryption", "session", "upload", "rapidapi", "partner", "merchant", "developer",
                                                     "user", "shared"]
    /// The endings of a header's name that make it a secret's: Azure API Management's `Ocp-Apim-Subscription-Key`, a
    /// session's id (`X-Session-Id`).
    private static let secretEndings = ["-api-key", "subscription-key", "session-id"]
    /// Credential headers named otherwise: an OAuth DPoP proof (RFC 9449), Firebase's App Check token, Azure Functions'
    /// key.
    private static let secretNames: Set<String> = ["dpop", "x-firebase-appcheck", "x-functions-key"]

    /// What Kubernetes' bearer token follows as a WebSocket subprotocol (a browser's WebSocket can set no other header).
    private static let bearerSubprotocol = "base64url.bearer.authorization.k8s.io."

    /// A WebSocket subprotocol list's items with a credential in them hidden: Kubernetes' bearer token (after
    /// `bearerSubprotocol`), and a JWT alone, as apps send one.
    private static func redactSubprotocols(_ value: String) -> String {
        let prefix = bearerSubprotocol
        return value.split(separator: ",", omittingEmptySubsequences: false).map { item -> String in
            let text = item.trimmingCharacters(in: .whitespaces)
            let lead = item.prefix { $0 == " " || $0 == "\t" }
            if text.lowercased().hasPrefix(prefix) { return String(lead) + text.prefix(prefix.count) + placeholder }
            // A JWT: three base64url parts, the first a JSON object's (`eyJ`).
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            if parts.count == 3, text.hasPrefix("eyJ"), text.count >= 20 { return String(lead) + placeholder }
            return String(item)
        }.joined(separator: ",")
    }

    /// The header fields whose value is a URL, lowercased: `Referer` carries the whole address of the page before,
    /// query included.
    private static let urlFields: Set<String> = ["location", "content-location", "referer", "refresh"]

    /// The headers with secret values replaced, and a secret spelt in a field's name too (an upstream echoing the app's
    /// token as `X-Echo-<token>`).
    public func redact(_ fields: HTTPHeaderFields) -> HTTPHeaderFields {
        HTTPHeaderFields(fields.map { field in
            let name = field.name.lowercased()
            let shownName = scrub(field.name)
            if namesSecretHeader(name) { return (name: shownName, value: Self.placeholder) }
            // A redirect's, a representation's or the previous page's address carries its query's secrets (and its
            // password) as any URL does; so does each address a `Link` field lists (`<…?sig=…>; rel=next`).
            if Self.urlFields.contains(name) { return (name: shownName, value: scrub(redactAddress(field.value))) }
            if name == "link" { return (name: shownName, value: scrub(redactLinks(field.value))) }
            if name == "sec-websocket-protocol" { return (name: shownName, value: scrub(Self.redactSubprotocols(field.value))) }
            return (name: shownName, value: scrub(field.value))
        })
    }
}

extension URL {
    /// This URL as text with the standard secrets removed, for errors and logs.
    public var redactedString: String { Redactor.standard.redact(self) }
}

/// A body's bytes with JSON's escapes undone (`\uXXXX`, a surrogate pair of them, `\/`, `\"`, `\\`, `\n`…), and, when
/// asked, where in the original each byte starts. Escapes are undone wherever they are, in a string or not: a secret is
/// looked for, not a document read.
struct JSONUnescaped {
    /// The bytes, escapes undone.
    private(set) var bytes: [UInt8] = []
    /// Per byte, the offset in the original of the escape (or byte) it came from; empty unless asked for.
    private(set) var starts: [UInt32] = []
    private let count: Int

    init(_ data: Data, locating: Bool) {
        let source = [UInt8](data)
        count = source.count
        bytes.reserveCapacity(source.count)
        if locating { starts.reserveCapacity(source.count) }
        var index = 0
        func append(_ decoded: some Sequence<UInt8>, from start: Int) {
            for byte in decoded {
                bytes.append(byte)
                if locating { starts.append(UInt32(start)) }
            }
        }
        while index < source.count {
            guard source[index] == UInt8(ascii: "\\"), index + 1 < source.count else {
                append(CollectionOfOne(source[index]), from: index)
                index += 1
                continue
            }
            let next = source[index + 1]
            if next == UInt8(ascii: "u"), let unit = Self.hex(source, index + 2) {
                // A high surrogate followed by its low one is one character.
                if (0xD800..<0xDC00).contains(unit), index + 11 < source.count, source[index + 6] == UInt8(ascii: "\\"),
                   source[index + 7] == UInt8(ascii: "u"), let low = Self.hex(source, index + 8), (0xDC00..<0xE000).contains(low),
                   let scalar = Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) {
                    append(String(scalar).utf8, from: index)
                    index += 12
                } else {
                    append(Unicode.Scalar(unit).map { Array(String($0).utf8) } ?? [0xEF, 0xBF, 0xBD], from: index)
                    index += 6
                }
                continue
            }
            let simple: UInt8? = switch next {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): next
            case UInt8(ascii: "n"): 0x0A
            case UInt8(ascii: "t"): 0x09
            case UInt8(ascii: "r"): 0x0D
            case UInt8(ascii: "b"): 0x08
            case UInt8(ascii: "f"): 0x0C
            default: nil
            }
            if let simple {
                append(CollectionOfOne(simple), from: index)
                index += 2
            } else {
                append(CollectionOfOne(source[index]), from: index)
                index += 1
            }
        }
    }

    /// The stretch of the original that the bytes `range` came from (located ones only).
    func original(of range: Range<Int>) -> Range<Int> {
        let lower = Int(starts[range.lowerBound])
        // The last byte's escape ends where the next escape's bytes start (one escape may make several bytes).
        let last = starts[range.upperBound - 1]
        let upper = starts[range.upperBound...].first { $0 != last }.map(Int.init) ?? count
        return lower..<upper
    }

    /// The four hex digits at `start` as a number, or nil.
    private static func hex(_ source: [UInt8], _ start: Int) -> UInt32? {
        guard start + 4 <= source.count else { return nil }
        var value: UInt32 = 0
        for byte in source[start..<start + 4] {
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: return nil
            }
            value = value << 4 | digit
        }
        return value
    }
}

/// Secrets searched for in bytes: Horspool's search over a set of keys (windows as long as the shortest key, each jump
/// the shortest any key allows), so a body is read once however many keys there are. Scanning for a key with memchr
/// stopped at every byte equal to its first (a random key's first character is in a JSON body hundreds of times); this
/// looks at about one byte in the shortest key's length, as the keys' bytes are rarely at the end of a window. A window
/// whose last byte ends some key's first `window` bytes is compared with each such key whole.
struct SecretScan: Sendable, Hashable {
    /// The keys' UTF-8 bytes.
    let needles: [[UInt8]]
    /// The shortest key's length: how many bytes each step of the search looks at the end of.
    private let window: Int
    /// Per byte value, the jump after a window ending in it (at most 255).
    private let shifts: [UInt8]
    /// Per byte value, whether some key's first `window` bytes end with it.
    private let ends: [Bool]

    /// A search for these keys (their UTF-8 bytes; empty ones are left out).
    init(_ keys: [[UInt8]]) {
        needles = keys.filter { !$0.isEmpty }
        window = needles.map(\.count).min() ?? 0
        var shifts = [UInt8](repeating: UInt8(min(window, 255)), count: 256)
        var ends = [Bool](repeating: false, count: 256)
        for needle in needles {
            for (index, byte) in needle.prefix(window - 1).enumerated() {
                shifts[Int(byte)] = min(shifts[Int(byte)], UInt8(min(window - 1 - index, 255)))
            }
            ends[Int(needle[window - 1])] = true
        }
        self.shifts = shifts
        self.ends = ends
    }

    /// Whether any of the keys occurs anywhere in `haystack`.
    func occurs(in haystack: UnsafeRawBufferPointer) -> Bool {
        let count = haystack.count
        guard window > 0, count >= window, let hay = haystack.baseAddress else { return false }
        return shifts.withUnsafeBufferPointer { shifts in
            ends.withUnsafeBufferPointer { ends in
                var start = 0
                while start <= count - window {
                    let end = haystack[start + window - 1]
                    if ends[Int(end)], matches(at: start, hay, count) { return true }
                    start += Int(shifts[Int(end)])
                }
                return false
            }
        }
    }

    /// Whether a key whose first `window` bytes may end at `start + window - 1` is at `start` whole.
    private func matches(at start: Int, _ hay: UnsafeRawPointer, _ count: Int) -> Bool {
        needles.contains { needle in
            needle.count <= count - start
                && needle.withUnsafeBufferPointer { memcmp(hay + start, $0.baseAddress!, needle.count) == 0 }
        }
    }
}

/// A search for a field that may carry a secret: a string just before a colon (a JSON field's name) whose last letters,
/// read as `JSONFields` reads a name (capitals as small letters, `_` and `-` left out), are the last letters of one of
/// the names — their last four, or the whole name when shorter. Every body captured as JSON meets it first, and names
/// only end before colons, so it jumps from colon to colon (memchr) and reads a few bytes back from each; the search it
/// replaced looked at every byte (a fifth of a proxy's CPU on plain JSON answers).
struct FieldNameScan: Sendable, Hashable {
    /// The names' last letters (at most 4 bytes), each packed big-endian into the low bytes of a `UInt32`, with its
    /// length: a stem of 4 bytes never equals a shorter one packed, but `ab` would equal `\0ab`.
    private let stems: Set<Stem>
    /// One bit per stem, hashed: a name's end whose bit is clear is none of them, told without hashing it for the set.
    private let filter: [UInt64]

    private struct Stem: Sendable, Hashable {
        let packed: UInt32
        let length: Int

        /// Which of the filter's 4,096 bits stands for this stem (Fibonacci hashing: the product's top 12 bits).
        var bit: Int { Int(((UInt64(packed) | UInt64(length) << 32) &* 0x9E37_79B9_7F4A_7C15) &>> 52) }
    }

    /// A search for names ending in `stems` (each at most 4 bytes, ASCII letters already lowercased, without `_` or `-`;
    /// empty ones are left out).
    init(_ stems: [[UInt8]]) {
        self.stems = Set(stems.filter { !$0.isEmpty && $0.count <= 4 }.map { stem in
            Stem(packed: stem.reduce(0) { $0 << 8 | UInt32($1) }, length: stem.count)
        })
        var filter = [UInt64](repeating: 0, count: 64)
        for stem in self.stems { filter[stem.bit >> 6] |= 1 << UInt64(stem.bit & 63) }
        self.filter = filter
    }

    /// Whether some string in `text` followed by a colon (spaces between allowed) ends in one of the stems — every field
    /// whose name is one of the names, and strings that only look like one.
    func occurs(in text: UnsafeRawBufferPointer) -> Bool {
        guard !stems.isEmpty, let base = text.baseAddress else { return false }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let count = text.count
        let quote = UInt8(ascii: "\"")
        var from = 0
        while from < count, let found = memchr(bytes + from, Int32(UInt8(ascii: ":")), count - from) {
            let colon = bytes.distance(to: found.assumingMemoryBound(to: UInt8.self))
            from = colon + 1
            var index = colon - 1
            while index >= 0, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index -= 1
            }
            guard index > 0, bytes[index] == quote else { continue }
            // The name's last letters, read backwards up to its opening quote.
            var packed: UInt32 = 0
            var length = 0
            index -= 1
            while index >= 0, length < 4 {
                let byte = bytes[index]
                index -= 1
                if byte == quote { break }
                if byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") { continue }
                packed |= UInt32(byte &- 0x41 < 26 ? byte | 0x20 : byte) << UInt32(8 * length)
                length += 1
            }
            let end = Stem(packed: packed, length: length)
            if length > 0, filter[end.bit >> 6] & (1 << UInt64(end.bit & 63)) != 0, stems.contains(end) { return true }
        }
        return false
    }
}

/// The fields of a JSON body whose string values are secrets: the secret query items' names (any case, with or without
/// `_` and `-`, so `access_token`, `accessToken` and `ACCESS-TOKEN` alike), but for the ones that name ordinary data
/// in a document (`key`, `hash`, `ts`, `sig`, `signature`, `code`, `session`). Found by a walk over the body's strings, which runs only
/// when a cheap search finds a name's last four letters somewhere in it.
struct JSONFields: Sendable, Hashable {
    /// The names, lowercased, without `_` or `-`.
    let names: Set<[UInt8]>
    /// Each name's last four letters (all of it when shorter), looked for at the end of every field's name as the
    /// names are matched: in any case, and across `_` and `-` (`api_KEY` ends in `ikey`).
    let scan: FieldNameScan

    /// Names that are secrets in a query but ordinary in a JSON document.
    static let ordinary: Set<String> = ["key", "hash", "ts", "sig", "signature", "code", "session"]

    init(_ queryItems: Set<String>) {
        let names = Set(queryItems.subtracting(Self.ordinary).map(Self.normalized).filter { !$0.isEmpty })
        self.names = names
        scan = FieldNameScan(names.map { Array($0.suffix(4)) } + Self.secretEndings.map { Array($0.suffix(4)) })
    }

    /// How a name ends when its last word says it holds a secret (`new_password`, `db_secret`, `githubToken`, as a header's
    /// last word does): an app's own secret fields are seldom on any list. Matched as names are (lowercased, without `_`
    /// and `-`).
    static let secretEndings: [[UInt8]] = ["password", "passwd", "secret", "token", "apikey", "credential", "credentials"].map { Array($0.utf8) }
    /// Names ending in `token` that are cursors, not secrets: a page's or a sync's position, which a developer reads.
    static let cursorTokens: Set<[UInt8]> = Set(["pagetoken", "nextpagetoken", "nexttoken", "continuationtoken", "synctoken",
                                                 "cursortoken", "resumptiontoken", "prevpagetoken", "previouspagetoken"].map { Array($0.utf8) })

    /// Whether a field of this name (as matched) holds a secret: named on the lists, or by its last word.
    func isSecret(_ name: [UInt8]) -> Bool {
        names.contains(name) || Self.endsInSecretWord(name)
    }

    /// Whether the name (as matched) ends in a word that says it holds a secret (`secretEndings`), cursors aside.
    static func endsInSecretWord(_ name: [UInt8]) -> Bool {
        secretEndings.contains { name.count >= $0.count && name.suffix($0.count).elementsEqual($0) } && !cursorTokens.contains(name)
    }

    /// A name as matched: ASCII lowercased, `_` and `-` left out.
    static func normalized<Bytes: Sequence<UInt8>>(_ name: Bytes) -> [UInt8] {
        name.compactMap { byte in
            byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-") ? nil : (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
        }
    }

    static func normalized(_ name: String) -> [UInt8] { normalized(Array(name.utf8)) }

    /// A field's name as written between its quotes, as matched: escapes undone (a name of more than 64 bytes, as read,
    /// is no name on the lists).
    private static func name(_ written: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard written.contains(UInt8(ascii: "\\")) else { return written.count <= 64 ? normalized(written) : [] }
        let read = JSONUnescaped(Data(written), locating: false).bytes
        return read.count <= 64 ? normalized(read) : []
    }

    /// Where the string values of `body`'s secret fields are (offsets from its start, inside the quotes), in order. A
    /// body cut short (the log's first MB) is walked as far as it goes.
    /// A name written with JSON's escapes (`"p\u0061ssword"`, which every parser reads as `password`) is matched as it
    /// reads: the cheap search looks at the bytes as written, so a body holding a backslash is walked whatever it finds.
    func values(in body: Data, lineByLine: Bool = false, inLists: Bool = true) -> [Range<Int>] {
        guard body.withUnsafeBytes({ scan.occurs(in: $0) || Redactor.holdsBackslash($0) })
        else { return [] }
        var values: [Range<Int>] = []
        body.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\"), lineFeed = UInt8(0x0A), carriageReturn = UInt8(0x0D)
            func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 }
            /// Where the string opening at `start` (its quote) closes, nil when the body ends first; `lineByLine`, or the
            /// line break that came first: no JSON string holds one, so in text around JSON (an event stream's lines,
            /// prose) a quote left open on its line is a stray one, and the walk goes on from the next line. (Not in a JSON
            /// body: a server's raw line feed inside a string would put the quotes after it out of step.)
            func close(from start: Int) -> Int? {
                var index = start + 1
                while index < count {
                    let byte = bytes[index]
                    if lineByLine, byte == lineFeed || byte == carriageReturn { return index }
                    if byte == backslash {
                        // (A backslash ending its line escapes no line break.)
                        if lineByLine, index + 1 < count, bytes[index + 1] == lineFeed || bytes[index + 1] == carriageReturn { return index + 1 }
                        index += 2
                        continue
                    }
                    if byte == quote { return index }
                    index += 1
                }
                return nil
            }
            /// Adds the strings inside the list opening at `start` (its lists' too; of an object in it, the values, not the
            /// names); returns where the walk goes on: after its closing bracket, or at the end of the body or line that
            /// came first.
            func containedValues(from start: Int) -> Int {
                var depth = 0, index = start
                while index < count {
                    switch bytes[index] {
                    case UInt8(ascii: "["), UInt8(ascii: "{"):
                        depth += 1
                        index += 1
                    case UInt8(ascii: "]"), UInt8(ascii: "}"):
                        depth -= 1
                        index += 1
                        if depth == 0 { return index }
                    case quote:
                        guard let end = close(from: index) else { return count }
                        guard bytes[end] == quote else { return end + 1 }
                        var after = end + 1
                        while after < count, isSpace(bytes[after]) { after += 1 }
                        if after >= count || bytes[after] != UInt8(ascii: ":") { values.append((index + 1)..<end) }
                        index = end + 1
                    default:
                        index += 1
                    }
                }
                return count
            }
            var index = 0
            while index < count {
                guard bytes[index] == quote else { index += 1; continue }
                guard let end = close(from: index) else { return }
                guard bytes[end] == quote else { index = end + 1; continue }
                var next = end + 1
                while next < count, isSpace(bytes[next]) { next += 1 }
                // A string followed by a colon is a field's name.
                guard next < count, bytes[next] == UInt8(ascii: ":"), end - index - 1 <= 64 * 6,
                      isSecret(Self.name(UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]))) else {
                    index = end + 1
                    continue
                }
                var value = next + 1
                while value < count, isSpace(bytes[value]) { value += 1 }
                // A list under a secret's name (`"password": ["…"]`): every string in it is the secret's, to its closing
                // bracket. (An object is not: one under a secret's name is more often a schema's description of the field,
                // `"api_key": {"type": "string"}`, than the secret.)
                if inLists, value < count, bytes[value] == UInt8(ascii: "[") {
                    index = containedValues(from: value)
                    continue
                }
                guard value < count, bytes[value] == quote, let valueEnd = close(from: value), bytes[valueEnd] == quote else {
                    index = next + 1
                    continue
                }
                values.append((value + 1)..<valueEnd)
                index = valueEnd + 1
            }
        }
        return values
    }
}
