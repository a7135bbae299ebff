public import Foundation
public import KioskCore

/// One "map local" rule of the network debugger: requests it matches are answered with its response,
/// without the upstream, and logged as `mocked`.
public struct MockRule: Sendable, Hashable, Codable, Identifiable {
    /// A fingerprint of the answer (status, headers, body), the same in every process (FNV-1a): an edit made on one
    /// version is told from a change made since (`MockRules.update(unchangedFrom:)`).
    public var answerVersion: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
            hash = (hash ^ 0xFF) &* 0x0000_0100_0000_01B3
        }
        add(String(status).utf8)
        for header in headers { add(header.name.utf8); add(header.value.utf8) }
        add(body)
        return String(hash, radix: 16)
    }

    /// Stable within the rules file.
    public var id: Int
    /// GET, HEAD... (`*` for any).
    public var method: String
    /// The URL to match: exact after normalisation (secret query items and their order ignored), or a
    /// pattern where `*` matches any run of characters.
    public var urlPattern: String
    public var status: Int
    public var headers: [RequestRecord.HeaderField]
    public var body: Data
    public var isEnabled: Bool
    /// How many requests it answered.
    public var hits: Int
    /// Where it came from ("har: file.har", "added by hand", "from request #12").
    public var origin: String

    public init(id: Int = 0, method: String = "GET", urlPattern: String, status: Int = 200,
                headers: [RequestRecord.HeaderField] = [], body: Data = Data(), isEnabled: Bool = true, hits: Int = 0,
                origin: String = "added by hand") {
        self.id = id
        self.method = method.uppercased()
        self.urlPattern = urlPattern
        self.status = status
        self.headers = headers
        self.body = body
        self.isEnabled = isEnabled
        self.hits = hits
        self.origin = origin
    }
}

extension MockRule {
    /// The response headers (lower-cased) a rule never keeps from a recorded answer: its body is kept
    /// decoded and whole, cookies are never replayed, hop-by-hop fields belong to a connection, and the
    /// marker is the mock's own.
    public static let droppedHeaderNames: Set<String> = ["content-encoding", "content-length", "transfer-encoding", "connection",
                                                         "keep-alive", "set-cookie", MockingTransport.markerHeader.lowercased(),
                                                         // Said anew by each answer the rule gives, never the logged one's.
                                                         "cache-status", "date", "age"]

    /// Whether a rule made of a recorded answer to `method` keeps its field `field`: none of `droppedHeaderNames`, but a
    /// HEAD's Content-Length when it is a length — the length of the body its GET gets (RFC 9110 §9.3.2: a HEAD's fields
    /// are its GET's), which the rule, answering a HEAD with no body, cannot say otherwise.
    public static func keepsRecorded(_ field: RequestRecord.HeaderField, method: String) -> Bool {
        let name = field.name.lowercased()
        guard droppedHeaderNames.contains(name) else { return true }
        return name == "content-length" && method.uppercased() == "HEAD" && Int(field.value.trimmingCharacters(in: .whitespaces)) != nil
    }

    /// A rule answering `record`'s request as it was answered, with `body`, the logged answer's whole: the fields
    /// `keepsRecorded` keeps, and the body decoded from a coding Kiosk undoes (gzip, deflate, br), as a rule's body is
    /// kept (readable, editable, sent uncoded). A coding Kiosk cannot undo (zstd, two stacked) keeps its
    /// `Content-Encoding`, so the bytes go as what they are rather than as text they are not.
    public init(recorded record: RequestRecord, status: Int, body: Data) {
        var headers = record.responseHeaders.filter { Self.keepsRecorded($0, method: record.method) }
        var body = body
        let codings = record.responseHeaders.filter { $0.name.lowercased() == "content-encoding" }
        if let coding = ContentCoding.single(codings.map(\.value).joined(separator: ", ")) {
            if ContentCoding.decodes(coding), let decoded = ContentCoding.decoded(body, coding: coding) {
                body = decoded
            } else {
                headers += codings
            }
        }
        self.init(method: record.method, urlPattern: record.url, status: status, headers: headers, body: body,
                  origin: "from request #\(record.id)")
    }

    /// Why the rule cannot be kept, or nil: its URL pattern must be one (`URLPattern.problem`), its method an RFC 9110
    /// token (`*` is one) and its headers valid fields, since they are written back out verbatim in every answer it gives.
    public var syntaxProblem: String? {
        guard HTTPSyntax.finalStatuses.contains(status) else { return Self.statusProblem(status) }
        if let problem = URLPattern.problem(urlPattern)?.english ?? HTTPSyntax.problem(method: method, headers: headers) { return problem }
        return framingProblem
    }

    /// The fields each answer's framing sets, which a rule given by hand cannot say otherwise: Kiosk writes the body's
    /// own length (or chunks) and its own connection fields, so a value typed here would be dropped without a word.
    private static let framingHeaderNames: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive"]

    /// Why a header of the rule cannot be sent as given, or nil: a framing field, but a HEAD's numeric Content-Length
    /// (the length its GET's body has, which `keepsRecorded` keeps too).
    private var framingProblem: String? {
        guard let field = headers.first(where: { Self.framingHeaderNames.contains($0.name.lowercased()) }),
              !(Self.keepsRecorded(field, method: method) && field.name.lowercased() == "content-length") else { return nil }
        if field.name.lowercased() == "content-length" {
            return "A mock's Content-Length is its body's length (\(body.count) bytes), set by Kiosk: leave the header out."
        }
        return "\(field.name) belongs to the connection, set by Kiosk for each answer: leave the header out."
    }

    /// Why `status` cannot be a mock's answer.
    public static func statusProblem(_ status: Int) -> String {
        "A mock's status is a final one, from 200 to 599 (got \(status)\((100...199).contains(status) ? ", a 1xx is no answer" : ""))."
    }
}

/// The mock rules, persisted as JSON in the data directory (so `kiosk mock add` in a terminal is seen by
/// a running `kiosk serve`: the file is read again whenever it changes). Matching ignores the secret
/// query items the redactor knows (`apikey`, `hash`, `ts`...), so a rule imported from a redacted
/// archive matches the live request with its real keys.
public final class MockRules: Sendable {
    /// The JSON file; nil keeps the rules in memory only.
    public var fileURL: URL? { file.url }
    private let redactor: Redactor
    private let file: SharedJSONFile<File>

    private struct File: Codable {
        /// Every rule, in the order they are tried. Any change to them but a hit counted (`countHit`) drops `matcher`.
        var rules: [MockRule] = [] {
            didSet { matcher = nil }
        }
        /// The enabled rules made ready to match, once per version of the rules; nil until first needed after a change
        /// (never written).
        var matcher: MockMatcher?

        enum CodingKeys: String, CodingKey {
            case rules
        }

        /// The matcher of the rules as they are, made now if they changed since it was last made.
        mutating func readyMatcher(ignoring names: Set<String>) -> MockMatcher {
            if let matcher { return matcher }
            let made = MockMatcher(rules, ignoring: names)
            matcher = made
            return made
        }

        /// Counts a hit of the rule at `position` and returns it: a count changes nothing a matcher reads, so it stays.
        mutating func countHit(at position: Int) -> MockRule {
            let kept = matcher
            rules[position].hits += 1
            matcher = kept
            return rules[position]
        }
    }

    /// Rules in `fileURL` (created on the first save); `redactor` names the query items matching ignores; `report` is
    /// told when a version of the file that matching would use cannot be read (the rules read before stay in use).
    public init(fileURL: URL?, redactor: Redactor, report: (@Sendable (String) -> Void)? = nil) {
        // Hits counted here and not saved yet go into a version of the file `kiosk mock` wrote meanwhile.
        file = SharedJSONFile(url: fileURL, empty: File(), name: "the mock rules", report: report) { loaded, memory, read in
            MockRule.carryHits(loaded: loaded.rules, memory: memory.rules, into: &read.rules)
        }
        self.redactor = redactor
    }

    /// Every rule, in the order they are tried.
    public func all() throws -> [MockRule] { try file.read().rules }

    /// Adds rules (ids assigned) after the others, each replacing any rule that answers the same requests
    /// (same method, same URL once secret query items and their order are ignored; a wildcard pattern as
    /// written), a later one in `newRules` replacing an earlier one; saves. An exact URL is kept without its secret
    /// query items (a recorded request's key or signature, or a log's `<redacted>`), which matching ignores: no key is
    /// written to the rules file, whether a rule came from an archive, the log or by hand. Returns the rules added. Throws
    /// `invalidRequest`, adding none, when any rule has a `syntaxProblem`.
    @discardableResult
    public func add(_ newRules: [MockRule]) throws -> [MockRule] {
        if let problem = newRules.lazy.compactMap(\.syntaxProblem).first { throw KioskError.invalidRequest(problem) }
        let names = redactor.queryItems
        let keys = newRules.map { Self.key(method: $0.method, urlPattern: $0.urlPattern, ignoring: names) }
        return try file.update { file in
            // Numbered before the replaced rules go, so an id is never given twice (a page showing the old
            // rule cannot act on its replacement).
            var nextID = (file.rules.map(\.id).max() ?? 0) + 1
            let replaced = Set(keys)
            file.rules.removeAll { replaced.contains(Self.key(method: $0.method, urlPattern: $0.urlPattern, ignoring: names)) }
            var added: [MockRule] = []
            var position: [String: Int] = [:]
            for (newRule, key) in zip(newRules, keys) {
                var rule = newRule
                rule.id = nextID
                rule.urlPattern = URLPattern.kept(rule.urlPattern, ignoring: names)
                nextID += 1
                if let index = position[key] {
                    added[index] = rule
                } else {
                    position[key] = added.count
                    added.append(rule)
                }
            }
            file.rules += added
            return added
        }
    }

    /// `rule`, made from a recorded answer (an archive's, the log's), as a rules file may keep it: without the secret
    /// fields the answer carried (a token, a key: the recording's, which a mock has no use for), its other fields and its
    /// body redacted as the log keeps them (a configured key, a JSON or form body's secret fields).
    public func redactingRecorded(_ rule: MockRule) -> MockRule {
        var rule = rule
        let kept = HTTPHeaderFields(rule.headers.filter { !redactor.namesSecretHeader($0.name.lowercased()) }.map { (name: $0.name, value: $0.value) })
        rule.headers = redactor.redact(kept).map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
        rule.body = redactor.redactBody(rule.body, contentType: kept["Content-Type"], contentEncoding: kept.combined("Content-Encoding"))
        return rule
    }

    /// The rule adding `rule` would replace (the same method and URL, as `add` compares them); nil when there is none.
    public func replaced(by rule: MockRule) throws -> MockRule? {
        let names = redactor.queryItems
        let key = Self.key(method: rule.method, urlPattern: rule.urlPattern, ignoring: names)
        return try all().first { Self.key(method: $0.method, urlPattern: $0.urlPattern, ignoring: names) == key }
    }

    /// The query items matching ignores (the redactor's secret ones), lower-cased.
    var ignoredQueryItems: Set<String> { redactor.queryItems }

    /// Removes a rule; throws `notFound` for an unknown id.
    public func remove(id: Int) throws {
        try file.update { file throws(KioskError) in
            guard file.rules.contains(where: { $0.id == id }) else { throw KioskError.notFound("mock rule \(id)") }
            file.rules.removeAll { $0.id == id }
        }
    }

    /// The rule `id`; throws `notFound` for an unknown id.
    public func rule(id: Int) throws -> MockRule {
        guard let rule = try all().first(where: { $0.id == id }) else { throw KioskError.notFound("mock rule \(id)") }
        return rule
    }

    /// Gives rule `id` another answer — `status`, `headers` and `body` — keeping what it matches, its state, hits and
    /// origin; saves and returns it. Throws `notFound` for an unknown id, `invalidRequest` for a status outside 200–599 or
    /// a field a rule cannot keep (`syntaxProblem`).
    @discardableResult
    public func update(id: Int, status: Int, headers: [RequestRecord.HeaderField], body: Data, unchangedFrom version: String? = nil)
        throws -> MockRule {
        guard HTTPSyntax.finalStatuses.contains(status) else { throw KioskError.invalidRequest(MockRule.statusProblem(status)) }
        var changed: MockRule?
        let updated = try file.update { file throws(KioskError) -> MockRule in
            guard let index = file.rules.firstIndex(where: { $0.id == id }) else { throw KioskError.notFound("mock rule \(id)") }
            if let version, file.rules[index].answerVersion != version {
                changed = file.rules[index]
                return file.rules[index]
            }
            var rule = file.rules[index]
            rule.status = status
            rule.headers = headers
            rule.body = body
            if let problem = rule.syntaxProblem { throw KioskError.invalidRequest(problem) }
            file.rules[index] = rule
            return rule
        }
        if let changed { throw MockChanged(current: changed) }
        return updated
    }

    /// An edit of a mock's answer made on a version of it that has changed since: `current` is the rule as it is now.
    public struct MockChanged: Error, Sendable {
        public let current: MockRule
    }

    /// Enables or disables a rule; throws `notFound` for an unknown id.
    public func setEnabled(_ enabled: Bool, id: Int) throws {
        try file.update { file throws(KioskError) in
            guard let index = file.rules.firstIndex(where: { $0.id == id }) else { throw KioskError.notFound("mock rule \(id)") }
            file.rules[index].isEnabled = enabled
        }
    }

    /// The first enabled rule matching `request`, counting the hit.
    public func match(_ request: HTTPRequest) -> MockRule? {
        let names = redactor.queryItems
        // Made once per version of the rules and matched with outside the file's lock, which every exchange of both event
        // loops takes: a request no longer waits on another's match, nor parses each rule's URL again.
        let matcher = file.modify { $0.readyMatcher(ignoring: names) }
        // Every upstream request asks: with no rule enabled, answer before normalising the URL.
        guard !matcher.isEmpty else { return nil }
        let method = request.method.uppercased()
        // The URL sent, or the one the app asked a reverse listener for.
        let keys = request.matchedURLs.map { URLPattern.normalized($0.absoluteString, ignoring: names) }
        guard let found = matcher.first(method: method, keys: keys) else { return nil }
        let rule = file.modify { file -> MockRule? in
            // Rules changed since the match (an edit, another process's write): matched again as they are now.
            let current = file.readyMatcher(ignoring: names)
            guard let position = current === matcher ? found : current.first(method: method, keys: keys) else { return nil }
            return file.countHit(at: position)
        }
        if rule != nil { file.noteUnsavedChange() }
        return rule
    }

    /// Writes the hit counts gathered since the last save, at most once a second unless `force`d: an
    /// offline replay answers dozens of requests a second, and the counts need not be exact to the moment.
    public func saveHits(force: Bool = false) { file.saveIfDue(force: force) }

    /// What two rules answering the same requests share: the method, upper-cased, and the URL as matching
    /// sees it (normalised), or a wildcard pattern as written.
    static func key(method: String, urlPattern: String, ignoring names: Set<String>) -> String {
        method.uppercased() + " " + (urlPattern.contains("*") ? URLPattern.queryInOrder(urlPattern, ignoring: names)
                                     : URLPattern.normalized(urlPattern, ignoring: names))
    }
}

/// The enabled rules of one version of the rules, ready to match: each URL pattern read once, exact URLs indexed by
/// themselves and wildcard patterns by the origin they spell out, so that a request is compared with the few rules that
/// can match it, not parsed against every rule (5,000 rules took 25 ms a request so).
final class MockMatcher: Sendable {
    /// A rule as matching reads it: its place in the file's list (the first match wins), its method, its pattern.
    private struct Candidate: Sendable {
        let position: Int
        let method: String
        let pattern: URLPattern
    }

    /// Rules with an exact URL, by that URL normalised; each list in the rules' order.
    private let exact: [String: [Candidate]]
    /// Wildcard patterns whose scheme and authority come before their first `*`, by that origin (`https://a.test`).
    private let byOrigin: [String: [Candidate]]
    /// The other wildcard patterns (`*/users`, `https://*.a.test/*`), tried for every request.
    private let anywhere: [Candidate]
    /// Whether no rule is enabled.
    let isEmpty: Bool

    /// The enabled ones of `rules` that can answer (a file edited by hand may give one a 1xx status, which is no answer:
    /// it is passed over, the request going on); `names` are the query items matching ignores.
    init(_ rules: [MockRule], ignoring names: Set<String>) {
        var exact: [String: [Candidate]] = [:], byOrigin: [String: [Candidate]] = [:], anywhere: [Candidate] = []
        for (position, rule) in rules.enumerated() where rule.isEnabled && HTTPSyntax.finalStatuses.contains(rule.status) {
            let candidate = Candidate(position: position, method: rule.method, pattern: URLPattern(rule.urlPattern, ignoring: names))
            if let url = candidate.pattern.exactURL {
                exact[url, default: []].append(candidate)
            } else if let origin = Self.origin(of: rule.urlPattern.prefix { $0 != "*" }, whole: true) {
                byOrigin[String(origin), default: []].append(candidate)
            } else {
                anywhere.append(candidate)
            }
        }
        (self.exact, self.byOrigin, self.anywhere) = (exact, byOrigin, anywhere)
        isEmpty = exact.isEmpty && byOrigin.isEmpty && anywhere.isEmpty
    }

    /// The position of the first rule for `method` (upper-cased) matching one of `keys` (a request's URLs, normalised).
    func first(method: String, keys: [String]) -> Int? {
        var best: Int?
        func consider(_ candidates: [Candidate]?) {
            guard let found = candidates?.first(where: { candidate in
                candidate.position < (best ?? .max) && (candidate.method == "*" || candidate.method == method)
                    && keys.contains(where: candidate.pattern.matches)
            }) else { return }
            best = found.position
        }
        for key in keys {
            consider(exact[key])
            consider(Self.origin(of: key[...], whole: false).flatMap { byOrigin[String($0)] })
        }
        consider(anywhere)
        return best
    }

    /// The scheme and authority `text` starts with (`https://a.test:8443`): up to the first `/`, `?` or `#` after `://`.
    /// Nil without `://`; nil too, when `whole` (a pattern's text before its first `*`), when no such character ends the
    /// authority within `text`, since the rest of it is the wildcard's.
    static func origin(of text: Substring, whole: Bool) -> Substring? {
        guard let separator = text.range(of: "://") else { return nil }
        guard let end = text[separator.upperBound...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else {
            return whole ? nil : text
        }
        return text[..<end]
    }
}

/// Answers requests that a mock rule matches, marking the response (`X-Kiosk-Mock: <rule id>`) so the
/// capture logs it as `mocked`; everything else goes to the upstream.
public final class MockingTransport: HTTPTransport {
    /// The response header that marks a mocked answer.
    public static let markerHeader = HTTPResponse.mockMarkerHeader
    private let base: any HTTPTransport
    private let rules: MockRules

    public init(base: any HTTPTransport, rules: MockRules) {
        self.base = base
        self.rules = rules
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let rule = rules.match(request) else { return try await base.send(request) }
        var headers = HTTPHeaderFields(rule.headers.map { (name: $0.name, value: $0.value) })
        headers[Self.markerHeader] = String(rule.id)
        // The app is told what the log says of it, as of every answer through Kiosk (an edit's too): a mock's.
        headers.add(name: CacheStatus.headerName,
                    value: CacheStatus(recordedAs: .mocked, status: rule.status, isConditional: false, hasError: false).headerValue)
        rules.saveHits()
        request.note(ExchangeTouch(kind: .mock, id: rule.id, name: "\(rule.method) \(rule.urlPattern)",
                                   phrase: .mockAnswered(status: rule.status)))
        return HTTPResponse(status: rule.status, headers: headers, body: rule.body, url: request.url,
                            timings: RequestTimings(total: 0))
    }
}
