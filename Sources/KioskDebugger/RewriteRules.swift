public import Foundation
public import KioskCore

/// A declarative rewrite rule of the network debugger: it matches requests by endpoint and/or URL and
/// method, and changes their answers without pausing — status, headers, a JSON Patch on the body, added
/// latency — or fails them with a chosen error. Rules are tried in the order of their list, after a mock
/// or the upstream answered; several may apply to one answer, each seeing the one before's result.
public struct RewriteRule: Sendable, Hashable, Codable, Identifiable {
    /// Stable within the rules file: never reused, even after a delete (the request log refers to it).
    public var id: Int
    /// What the user calls it; a summary of the rule when left empty.
    public var name: String
    public var isEnabled: Bool
    public var match: Match
    public var actions: Actions
    /// How many answers it rewrote (or requests it failed).
    public var hits: Int
    public var createdAt: Date
    public var updatedAt: Date
    /// Where it came from ("added by hand", "from request #42", "from a breakpoint edit of #3").
    public var origin: String

    /// Which requests a rule applies to: every criterion given must hold.
    public struct Match: Sendable, Hashable, Codable {
        /// An endpoint name such as `rickandmorty.characters`; nil for any.
        public var endpoint: String?
        /// A URL, exact (secret query items and the order of the others ignored) or with `*` wildcards,
        /// as mock rules match; nil for any.
        public var urlPattern: String?
        /// GET, HEAD... or `*` for any.
        public var method: String

        public init(endpoint: String? = nil, urlPattern: String? = nil, method: String = "*") {
            self.endpoint = endpoint
            self.urlPattern = urlPattern
            self.method = method.uppercased()
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(endpoint: try container.decodeIfPresent(String.self, forKey: .endpoint),
                      urlPattern: try container.decodeIfPresent(String.self, forKey: .urlPattern),
                      method: try container.decodeIfPresent(String.self, forKey: .method) ?? "*")
        }

        /// "GET rickandmorty.characters https://…/character?page=2", or "any request".
        public var summary: String {
            let parts = [method == "*" ? nil : method, endpoint, urlPattern].compactMap { $0 }
            return parts.isEmpty ? "any request" : parts.joined(separator: " ")
        }
    }

    /// What a rule does to an answer, in this order: status, removed headers, set headers, the body's
    /// JSON Patch, then the latency before the answer goes on. `failure` fails the request instead.
    public struct Actions: Sendable, Hashable, Codable {
        /// The status to answer with; nil keeps the upstream's.
        public var status: Int?
        /// Headers set (replacing every field of the same name), in order.
        public var setHeaders: [RequestRecord.HeaderField]
        /// Header names removed (case-insensitively).
        public var removeHeaders: [String]
        /// An RFC 6902 JSON Patch document applied to the JSON body, as its text (kept as written, so its
        /// key order and numbers stay exactly as the user gave them); nil leaves the body alone.
        public var patch: String?
        /// Milliseconds added before the answer (or the failure) reaches the app.
        public var latencyMilliseconds: Int?
        /// Fail the request with this error instead of answering; nothing is sent upstream.
        public var failure: RuleFailure?

        public init(status: Int? = nil, setHeaders: [RequestRecord.HeaderField] = [], removeHeaders: [String] = [],
                    patch: String? = nil, latencyMilliseconds: Int? = nil, failure: RuleFailure? = nil) {
            self.status = status
            self.setHeaders = setHeaders
            self.removeHeaders = removeHeaders
            self.patch = patch
            self.latencyMilliseconds = latencyMilliseconds
            self.failure = failure
        }

        /// Whether the rule does anything at all.
        public var isEmpty: Bool {
            status == nil && setHeaders.isEmpty && removeHeaders.isEmpty && patch == nil && (latencyMilliseconds ?? 0) == 0
                && failure == nil
        }

        /// "status 503 · set X-A · remove ETag · JSON Patch · 800 ms · fail: time out".
        public var summary: String {
            var parts: [String] = []
            if let status { parts.append("status \(status)") }
            if !removeHeaders.isEmpty { parts.append("remove " + removeHeaders.joined(separator: ", ")) }
            if !setHeaders.isEmpty { parts.append("set " + setHeaders.map(\.name).joined(separator: ", ")) }
            if patch != nil { parts.append("JSON Patch") }
            if let latencyMilliseconds, latencyMilliseconds > 0 { parts.append("+\(latencyMilliseconds) ms") }
            if let failure { parts.append("fail: \(failure.summary)") }
            return parts.isEmpty ? "nothing" : parts.joined(separator: " · ")
        }

        public init(from decoder: any Decoder) throws {
            // Lenient: a rules file written by hand may leave out what it does not use.
            let container = try decoder.container(keyedBy: CodingKeys.self)
            status = try container.decodeIfPresent(Int.self, forKey: .status)
            setHeaders = try container.decodeIfPresent([RequestRecord.HeaderField].self, forKey: .setHeaders) ?? []
            removeHeaders = try container.decodeIfPresent([String].self, forKey: .removeHeaders) ?? []
            patch = try container.decodeIfPresent(String.self, forKey: .patch)
            latencyMilliseconds = try container.decodeIfPresent(Int.self, forKey: .latencyMilliseconds)
            failure = try container.decodeIfPresent(RuleFailure.self, forKey: .failure)
        }
    }

    /// A rule (its id, hit count and dates are assigned when it is added).
    public init(id: Int = 0, name: String = "", isEnabled: Bool = true, match: Match, actions: Actions, hits: Int = 0,
                createdAt: Date = .distantPast, updatedAt: Date = .distantPast, origin: String = "added by hand") {
        self.id = id
        self.name = name
        self.isEnabled = isEnabled
        self.match = match
        self.actions = actions
        self.hits = hits
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.origin = origin
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int.self, forKey: .id)
        match = try container.decode(Match.self, forKey: .match)
        actions = try container.decode(Actions.self, forKey: .actions)
        name = try container.decodeIfPresent(String.self, forKey: .name) ?? ""
        isEnabled = try container.decodeIfPresent(Bool.self, forKey: .isEnabled) ?? true
        hits = try container.decodeIfPresent(Int.self, forKey: .hits) ?? 0
        createdAt = try container.decodeIfPresent(Date.self, forKey: .createdAt) ?? .distantPast
        updatedAt = try container.decodeIfPresent(Date.self, forKey: .updatedAt) ?? createdAt
        origin = try container.decodeIfPresent(String.self, forKey: .origin) ?? "added by hand"
    }

    /// The name, or a summary of what the rule does when it has none.
    public var displayName: String { displayName(sayingActions: \.summary) }

    /// The name given, else what the rule matches and does, its actions said by `say` (a page's language).
    public func displayName(sayingActions say: (Actions) -> String) -> String {
        name.isEmpty ? "\(match.summary) → \(say(actions))" : name
    }

    /// The longest latency a rule may add: past it a request would outlive any sensible timeout.
    public static let maximumLatencyMilliseconds = 300_000

    /// The most headers a rule sets and removes, and the longest value it sets.
    static let maximumHeaders = 100
    static let maximumHeaderValueBytes = 16 * 1024
    /// The longest JSON Patch a rule carries (a patch of 100,000 operations took seconds of CPU a save).
    static let maximumPatchBytes = 256 * 1024

    /// Why the rule cannot be kept, for each face to say in its language (`english` for the CLI, the JSON API and the log), or
    /// nil. `endpoints`, when given, are the names a rule may match.
    public func ruleProblem(endpoints: Set<String>? = nil) -> RuleProblem? {
        if name.count > 200 { return .nameTooLong }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { return .nameNotOneLine }
        if match.endpoint == nil && match.urlPattern == nil { return .noTarget }
        if let endpoint = match.endpoint, let endpoints, !endpoints.contains(endpoint) {
            return .unknownEndpoint(String(endpoint.prefix(60)), known: endpoints.sorted())
        }
        if let pattern = match.urlPattern, let problem = URLPattern.problem(pattern) { return .urlPattern(problem) }
        guard HTTPSyntax.isToken(match.method) else { return .badMethod }
        if actions.isEmpty { return .doesNothing }
        // Bounds no hand-made rule reaches, so that a rule's file, page and JSON stay readable and quick to save.
        if actions.setHeaders.count + actions.removeHeaders.count > Self.maximumHeaders { return .tooManyHeaders(Self.maximumHeaders) }
        if let long = actions.setHeaders.first(where: { $0.value.utf8.count > Self.maximumHeaderValueBytes }) {
            return .headerValueTooLong(String(long.name.prefix(60)), kilobytes: Self.maximumHeaderValueBytes / 1024)
        }
        if let status = actions.status, !HTTPSyntax.finalStatuses.contains(status) { return .statusOutOfRange }
        if let name = (actions.setHeaders.map(\.name) + actions.removeHeaders).first(where: HTTPSyntax.isTransportField) {
            return .transportHeader(String(name.prefix(60)))
        }
        for header in actions.setHeaders {
            guard HTTPSyntax.isToken(header.name) else { return .badHeaderName(String(header.name.prefix(60))) }
            guard HTTPSyntax.isFieldValue(header.value) else { return .badHeaderValue(header.name) }
        }
        for name in actions.removeHeaders where !HTTPSyntax.isToken(name) { return .badHeaderName(String(name.prefix(60))) }
        if let latency = actions.latencyMilliseconds, !(0...Self.maximumLatencyMilliseconds).contains(latency) {
            return .latencyOutOfRange(maximum: Self.maximumLatencyMilliseconds)
        }
        if actions.failure != nil, actions.status != nil || !actions.setHeaders.isEmpty || !actions.removeHeaders.isEmpty
            || actions.patch != nil {
            return .failureWithAnswer
        }
        if let patch = actions.patch {
            guard patch.utf8.count <= Self.maximumPatchBytes else { return .patchTooLong(kilobytes: Self.maximumPatchBytes / 1024) }
            do {
                // A patch of no operation changes nothing, yet makes the rule act on the answer (its validators go).
                guard try !JSONPatch(parsing: patch).operations.isEmpty else { return .patchEmpty }
            } catch {
                return .patchInvalid(error)
            }
        }
        return nil
    }
}

/// Why a rewrite rule cannot be kept: `english` for the CLI, the JSON API and the log; the console says it in the
/// page's language (ConsoleWords).
public enum RuleProblem: Error, Sendable, Hashable {
    case nameTooLong, nameNotOneLine, noTarget
    /// An endpoint name the debugger does not know (cut to 60 characters), and the names it does.
    case unknownEndpoint(String, known: [String])
    case urlPattern(URLPatternProblem)
    case badMethod, doesNothing
    case tooManyHeaders(Int)
    case headerValueTooLong(String, kilobytes: Int)
    case statusOutOfRange
    case badHeaderName(String)
    case badHeaderValue(String)
    /// A framing or hop-by-hop field (`Content-Length`, `Transfer-Encoding`, `Connection`...), as the rule named it.
    case transportHeader(String)
    case latencyOutOfRange(maximum: Int)
    case failureWithAnswer
    case patchTooLong(kilobytes: Int)
    case patchEmpty
    /// The JSON Patch's own error (where in the patch, and what).
    case patchInvalid(JSONPatch.Error)

    /// The problem in an English sentence.
    public var english: String {
        switch self {
        case .nameTooLong: "The name is longer than 200 characters."
        case .nameNotOneLine: "The name must be one line of text."
        case .noTarget: "Say which requests the rule is for: an endpoint, a URL pattern, or both."
        case .unknownEndpoint(let name, let known): "There is no endpoint named “\(name)”; known: \(known.joined(separator: ", ")). "
            + "For an app's host through kiosk proxy, give a URL pattern (http://\(name)/*)."
        case .urlPattern(let problem): problem.english
        case .badMethod: "The method is not an HTTP method (RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only)."
        case .doesNothing: "The rule does nothing: give it a status, headers, a JSON Patch, a latency or a failure."
        case .tooManyHeaders(let maximum): "The rule changes more than \(maximum) headers."
        case .headerValueTooLong(let name, let kilobytes): "The value of header \(name) is longer than \(kilobytes) KB."
        case .statusOutOfRange: ExchangeTouch.RuleSkip.statusNotFinal.english
        case .badHeaderName(let name): "“\(name)” is not a valid HTTP header name (RFC 9110 token)."
        case .badHeaderValue(let name):
            "The value of header \(name) is not a valid HTTP field value (CR, LF, NUL and other control characters but the tab are not allowed)."
        case .transportHeader(let name): ExchangeTouch.RuleSkip.transportField(name).english
        case .latencyOutOfRange(let maximum): "The latency must be from 0 to \(maximum) ms."
        case .failureWithAnswer: "A rule that fails the request has no answer to rewrite: give it a failure (and a latency) only."
        case .patchTooLong(let kilobytes): "The JSON Patch is longer than \(kilobytes) KB."
        case .patchEmpty: "The JSON Patch has no operation."
        case .patchInvalid(let error): "The JSON Patch is not valid: \(error)"
        }
    }
}

/// The rewrite rules, persisted as JSON in the data directory like the mock rules (`kiosk rule add` in a
/// terminal is seen by a running `kiosk serve`). Each version of the file is compiled once — patches
/// parsed, URL patterns split — so a request that no rule matches costs a file-stamp check and a few
/// string comparisons.
public final class RewriteRules: Sendable {
    /// The JSON file; nil keeps the rules in memory only.
    public var fileURL: URL? { file.url }
    private let redactor: Redactor
    private let endpoints: Set<String>?
    private let now: @Sendable () -> Date
    private let file: SharedJSONFile<File>

    /// Rules in `fileURL` (created on the first save). `redactor` names the query items URL matching
    /// ignores; `endpoints`, when given, are the names a rule may match; `now` dates changes; `report` is told when a
    /// version of the file that matching would use cannot be read (the rules read before stay in use).
    public init(fileURL: URL?, redactor: Redactor, endpoints: Set<String>? = nil, now: @escaping @Sendable () -> Date = { Date() },
                report: (@Sendable (String) -> Void)? = nil) {
        // Hits counted here and not saved yet go into a version of the file `kiosk rule` wrote meanwhile.
        file = SharedJSONFile(url: fileURL, empty: File(), name: "the rewrite rules", report: report) { loaded, memory, read in
            RewriteRule.carryHits(loaded: loaded.rules, memory: memory.rules, into: &read.rules)
        }
        self.redactor = redactor
        self.endpoints = endpoints
        self.now = now
    }

    /// Every rule, in the order they are applied.
    public func all() throws -> [RewriteRule] { try file.read().rules }

    /// One rule; throws `notFound` for an unknown id.
    public func rule(id: Int) throws -> RewriteRule {
        guard let rule = try file.read().rules.first(where: { $0.id == id }) else { throw KioskError.notFound("rewrite rule \(id)") }
        return rule
    }

    /// Throws `invalidRequest` with the reason when `rule` cannot be kept (see `RewriteRule.problem`).
    public func validate(_ rule: RewriteRule) throws {
        if let problem = problem(of: rule) { throw KioskError.invalidRequest(problem.english) }
    }

    /// `rule` as the file keeps it: its URL pattern without secret query items (`URLPattern.kept`).
    private func kept(_ rule: RewriteRule) -> RewriteRule {
        var rule = rule
        rule.match.urlPattern = rule.match.urlPattern.map { URLPattern.kept($0, ignoring: redactor.queryItems) }
        return rule
    }

    /// Why `rule` cannot be kept here (its endpoint among this debugger's), for each face to say in its language; nil when it can.
    public func problem(of rule: RewriteRule) -> RuleProblem? { rule.ruleProblem(endpoints: endpoints) }

    /// Adds a rule at the end of the list (a new id, no hits, dated now) and saves; throws
    /// `invalidRequest`, adding nothing, when it cannot be kept.
    @discardableResult
    public func add(_ rule: RewriteRule) throws -> RewriteRule {
        try validate(rule)
        let date = now()
        let rule = kept(rule)
        return try file.update { file in
            var added = rule
            file.lastID = max(file.lastID, file.rules.map(\.id).max() ?? 0) + 1
            added.id = file.lastID
            added.hits = 0
            added.createdAt = date
            added.updatedAt = date
            file.rules.append(added)
            file.compiled = nil
            return added
        }
    }

    /// Replaces a rule's name, switch, match and actions with `definition`'s (its id, hits, creation date
    /// and origin stay), dated now, and saves; `notFound` for an unknown id, `invalidRequest` for a rule
    /// that cannot be kept. With `unchangedSince` (the `updatedAt` of the rule the edit was made on), `RuleChanged` when
    /// it has changed since (another console, the CLI): an edit of an older rule would undo that change unseen.
    @discardableResult
    public func update(id: Int, to definition: RewriteRule, unchangedSince: Date? = nil) throws -> RewriteRule {
        try validate(definition)
        let date = now()
        var changed: RewriteRule?
        let updated = try edit(id) { rule in
            if let unchangedSince, rule.updatedAt != unchangedSince {
                changed = rule
                return
            }
            rule.name = definition.name
            rule.isEnabled = definition.isEnabled
            rule.match = kept(definition).match
            rule.actions = definition.actions
            rule.updatedAt = date
        }
        if let changed { throw RuleChanged(current: changed) }
        return updated
    }

    /// Enables or disables a rule; throws `notFound` for an unknown id.
    public func setEnabled(_ enabled: Bool, id: Int) throws {
        let date = now()
        try edit(id) { rule in
            rule.isEnabled = enabled
            rule.updatedAt = date
        }
    }

    /// Sets a rule's hit count back to zero, or every rule's when `id` is nil; `notFound` for an unknown id.
    public func resetHits(id: Int?) throws {
        guard let id else {
            try file.update { file in
                for index in file.rules.indices { file.rules[index].hits = 0 }
            }
            return
        }
        try edit(id) { $0.hits = 0 }
    }

    /// Removes a rule; throws `notFound` for an unknown id.
    public func remove(id: Int) throws {
        try file.update { file throws(KioskError) in
            guard file.rules.contains(where: { $0.id == id }) else { throw KioskError.notFound("rewrite rule \(id)") }
            file.rules.removeAll { $0.id == id }
            file.compiled = nil
        }
    }

    /// An edit made on a version of a rule that has changed since: `current` is the rule as it is now.
    public struct RuleChanged: Error, Sendable {
        public let current: RewriteRule
    }

    @discardableResult
    private func edit(_ id: Int, _ change: (inout RewriteRule) -> Void) throws -> RewriteRule {
        try file.update { file throws(KioskError) -> RewriteRule in
            guard let index = file.rules.firstIndex(where: { $0.id == id }) else { throw KioskError.notFound("rewrite rule \(id)") }
            change(&file.rules[index])
            file.compiled = nil
            return file.rules[index]
        }
    }

    // MARK: Matching

    /// The enabled rules matching `request`, in order. The rules are compiled once per version of the
    /// file; the request's URL is normalised only when a rule that could match has a URL pattern.
    func matching(_ request: HTTPRequest) -> [CompiledRewriteRule] {
        let compiled = file.modify { file -> [CompiledRewriteRule] in
            if let compiled = file.compiled { return compiled }
            let compiled = file.rules.filter(\.isEnabled).map { CompiledRewriteRule($0, ignoring: redactor.queryItems) }
            file.compiled = compiled
            return compiled
        }
        guard !compiled.isEmpty else { return [] }
        var keys: [Int: String] = [:]
        let urls = request.matchedURLs
        return compiled.filter { rule in
            if let endpoint = rule.rule.match.endpoint, endpoint != request.endpoint { return false }
            if let method = rule.method, method != request.method, method != request.method.uppercased() { return false }
            guard let pattern = rule.pattern else { return true }
            // The URL sent, or the one the app asked a reverse listener for.
            return urls.indices.contains { index in
                guard pattern.mayMatch(urls[index].absoluteString) else { return false }
                let normalized = keys[index] ?? URLPattern.normalized(urls[index].absoluteString, ignoring: redactor.queryItems)
                keys[index] = normalized
                return pattern.matches(normalized)
            }
        }
    }

    /// Counts one hit for each rule in `ids` (saved at most once a second).
    func countHits(_ ids: [Int]) {
        guard !ids.isEmpty else { return }
        file.modify { file in
            for index in file.rules.indices where ids.contains(file.rules[index].id) { file.rules[index].hits += 1 }
        }
        file.noteUnsavedChange()
        file.saveIfDue()
    }

    /// Writes the hit counts gathered since the last save, at most once a second unless `force`d.
    public func saveHits(force: Bool = false) { file.saveIfDue(force: force) }

    private struct File: Codable, Sendable {
        var rules: [RewriteRule] = []
        /// The highest id ever given, so a deleted rule's id is never given again.
        var lastID = 0
        /// The enabled rules, compiled; nil until first needed after a change (never written).
        var compiled: [CompiledRewriteRule]?

        enum CodingKeys: String, CodingKey {
            case rules, lastID
        }

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            rules = try container.decodeIfPresent([RewriteRule].self, forKey: .rules) ?? []
            lastID = try container.decodeIfPresent(Int.self, forKey: .lastID) ?? (rules.map(\.id).max() ?? 0)
        }
    }
}

/// A rule made ready to apply: its method, URL pattern and patch read once.
struct CompiledRewriteRule: Sendable {
    let rule: RewriteRule
    /// The method to match, nil for any.
    let method: String?
    let pattern: URLPattern?
    /// The parsed patch, or why the stored text is not one (a rules file edited by hand).
    let patch: Result<JSONPatch, JSONPatch.Error>?
    /// Why the rule's answer cannot be written to an app (a rules file edited by hand: a 1xx status, a framing field),
    /// so the rule is skipped saying so.
    let unwritable: ExchangeTouch.RuleSkip?

    init(_ rule: RewriteRule, ignoring names: Set<String>) {
        self.rule = rule
        method = rule.match.method == "*" ? nil : rule.match.method
        pattern = rule.match.urlPattern.map { URLPattern($0, ignoring: names) }
        patch = rule.actions.patch.map { text in Result { () throws(JSONPatch.Error) in try JSONPatch(parsing: text) } }
        let actions = rule.actions
        if let status = actions.status, !HTTPSyntax.finalStatuses.contains(status) {
            unwritable = .statusNotFinal
        } else if let name = (actions.setHeaders.map(\.name) + actions.removeHeaders).first(where: HTTPSyntax.isTransportField) {
            unwritable = .transportField(String(name.prefix(60)))
        } else {
            unwritable = nil
        }
    }

    /// The touch a rule leaves on an exchange.
    func touch(applied: Bool, _ phrase: ExchangeTouch.Phrase) -> ExchangeTouch {
        ExchangeTouch(kind: .rule, id: rule.id, name: rule.displayName, applied: applied, phrase: phrase)
    }

    /// What applying the rule to an answer gives.
    enum Outcome {
        /// The rewritten answer and what was done.
        case applied(HTTPResponse, [ExchangeTouch.RuleEdit])
        /// The answer passes unchanged, for this reason.
        case skipped(ExchangeTouch.RuleSkip)
    }

    /// The rule's actions (but the latency) applied to `response`, all or nothing: when its patch cannot
    /// apply, nothing of the rule does. A changed status or body marks the answer edited (shown, never
    /// stored); changed headers alone do not, so caching behaviour can be tried with the real body.
    func rewrite(_ response: HTTPResponse, decodingAtMost limit: Int = ContentCoding.maximumDecodedBytes) -> Outcome {
        let actions = rule.actions
        var rewritten = response
        var done: [ExchangeTouch.RuleEdit] = []
        if let unwritable { return .skipped(unwritable) }
        if let status = actions.status {
            rewritten.status = status
            done.append(.status(from: response.status, to: status))
        }
        for name in actions.removeHeaders where rewritten.headers[name] != nil {
            rewritten.headers[name] = nil
            done.append(.removed(name))
        }
        for name in Set(actions.setHeaders.map { $0.name.lowercased() }) { rewritten.headers[name] = nil }
        for header in actions.setHeaders { rewritten.headers.add(name: header.name, value: header.value) }
        if !actions.setHeaders.isEmpty { done.append(.set(actions.setHeaders.map(\.name))) }
        switch patch {
        case nil: break
        case .failure(let error)?: return .skipped(.patchInvalid(error.description))
        case .success where response.stream != nil:
            return .skipped(.streamed)
        case .success(let patch)?:
            // A coded answer (gzip, br: what a browser asks for) is patched as its content, and goes on uncoded.
            let coding = ContentCoding.single(response.headers.combined("Content-Encoding"))
            // No larger than the answers its transport holds whole: a small gzip body must not become a huge one in memory.
            let decoded = coding.flatMap {
                ContentCoding.decodes($0) ? ContentCoding.decoded(response.body, coding: $0, maximumBytes: limit) : nil
            }
            // One that does not decode is not patched as if it were its content (a JSON body labelled gzip would go on
            // patched and still labelled so, which no client reads).
            if let coding, decoded == nil, !response.body.isEmpty {
                return .skipped(.undecodable(coding: coding))
            }
            let document: OrderedJSON
            do {
                document = try OrderedJSON.parse(decoded ?? response.body)
            } catch {
                let reason = (error as? OrderedJSON.ParseError)?.description ?? "not JSON"
                return .skipped(response.body.isEmpty ? .noBody : .notJSON(reason))
            }
            do {
                rewritten.body = Data(try patch.apply(to: document).compactBytes)
            } catch {
                return .skipped(.patchFailed(error.description))
            }
            if decoded != nil { rewritten.headers["Content-Encoding"] = nil }
            if rewritten.headers["Content-Length"] != nil { rewritten.headers["Content-Length"] = String(rewritten.body.count) }
            let count = patch.operations.count
            done.append(.patched(operations: count, decodedFrom: decoded != nil ? coding : nil))
        }
        if let latency = actions.latencyMilliseconds, latency > 0 { done.append(.latency(milliseconds: latency)) }
        if rewritten.status != response.status || rewritten.body != response.body {
            rewritten.isEdited = true
            // The app is told what the log says of an answer a rule changed, as of one edited at a breakpoint or mocked —
            // what the cache below did (a hit, a stored answer standing in for an unreachable upstream, or why it went
            // forward and whether the upstream's answer was stored), only now edited: "fwd=miss" alone would say the
            // upstream was asked when it was not, and hide what the proxy's cache decided and kept.
            // Its fwd-status stays what came from below (RFC 9211: the next hop's): a 500 a rule made a 200 is still found
            // by status:5xx.
            var edited = CacheStatus(recordedAs: .edited, status: response.status, isConditional: false, hasError: false)
            if var came = response.cacheStatus {
                came.decision = .edited
                edited = came
            }
            edited.replaceKiosksMember(in: &rewritten.headers)
            rewritten.cacheStatus = edited
        }
        return .applied(rewritten, done)
    }

    /// The error the rule fails a request with.
    func error(for request: HTTPRequest, timeout: Duration) -> KioskError? {
        guard let failure = rule.actions.failure else { return nil }
        let url = request.url.redactedString
        switch failure {
        case .timeout: return .timeout(url: url, seconds: timeout.seconds)
        case .offline: return .offline(host: request.url.host ?? url)
        case .reset: return .transport(url: url, message: "the connection closed before the response was complete")
        }
    }

    /// The latency the rule adds.
    var latency: Duration { .milliseconds(rule.actions.latencyMilliseconds ?? 0) }
}
