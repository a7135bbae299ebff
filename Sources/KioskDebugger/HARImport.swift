public import Foundation
public import KioskCore

// HAR import: an archive written by any tool (Kiosk, browsers, proxies, recorders) as mock rules that
// replay it. Everything here is all or nothing: a malformed archive throws before a rule exists.

extension HAR {
    /// Whether a recorded credential is a redacting exporter's placeholder rather than the credential: Kiosk's
    /// `<redacted>`, or the words other tools write (`REDACTED`, `[filtered]`, a row of asterisks).
    public static func isHiddenCredential(_ value: String) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.contains(Redactor.placeholder) || trimmed.contains("redacted") || trimmed.contains("[filtered]")
            || (!trimmed.isEmpty && trimmed.allSatisfy { $0 == "*" })
    }

    /// Why an archive cannot be imported: the first problem found, named by its JSON path
    /// (`log.entries[3].response.status`) when it lies inside the document.
    public struct ImportError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }

        init(_ message: String) { self.message = message }
    }

    /// Why an entry of an archive gives no mock rule, in the order a summary lists them.
    public enum SkipReason: String, Sendable, Hashable, CaseIterable, Codable {
        /// No `response` (a request-only archive, a capture that never finished).
        case noResponse
        /// The request failed: status 0 (browsers, mitmproxy, Kiosk) or -1 (Playwright).
        case failed
        /// Not an http(s) URL (`data:`, `ws:`, `about:`, `chrome-extension:`...): Kiosk never requests one.
        case unsupportedScheme
        /// An interim answer (1xx: a WebSocket upgrade, Early Hints), which no request ends with.
        case interim
        /// A body the archive did not keep, or kept only in part (a size above 0 but no `text`, or Kiosk's
        /// `_kioskTruncated`): replaying it empty or cut would be a lie.
        case bodyNotRecorded
        /// A body kept still compressed (gzip bytes under `Content-Encoding: gzip`, as Polly.JS keeps them; any
        /// coding's bytes in base64) where HAR wants it decoded: a mock answers with content, not coded bytes.
        case compressedBody
        /// The same method and URL is answered again in the archive, and the newest answer (the last, in an archive in
        /// time order) is replayed.
        case answeredAgain
        /// A 304 or a temporary error (429, 5xx) after a full answer to the same request: the full answer is
        /// replayed, since the later one only confirmed it or failed for a while.
        case keptEarlierAnswer
        /// A header section larger than an HTTP/1.1 answer Kiosk reads may have (80 KB, as NIO's parser allows): no
        /// server gave it, and replayed it would choke the app.
        case headersTooLarge
        /// An answer Kiosk's proxy made itself, its own export says, where no upstream answered: its 504 for what it had not
        /// stored (`--offline`, `only-if-cached`). Replayed, it would fake an outage the upstream never had.
        case madeByKiosk
        /// A URL no app can ask for through Kiosk: path escapes that are not UTF-8 text (the proxy refuses them, as they
        /// would not reach the upstream as written), or a request line longer than the
        /// proxy reads (64 KB). Kept, it would be listed and exported but never replayed.
        case unsendableURL

        /// "3 without a response": `count` entries skipped for this reason; `schemes` names the URL schemes
        /// of `unsupportedScheme`.
        public func phrase(_ count: Int, schemes: [String] = []) -> String {
            switch self {
            case .noResponse: "\(count) without a response"
            case .failed: "\(count) failed (status 0 or below)"
            case .unsupportedScheme where schemes.count == 1: "\(count) \(schemes[0]): URL\(count == 1 ? "" : "s")"
            case .unsupportedScheme: "\(count) not http(s) (\(schemes.map { $0 + ":" }.joined(separator: ", ")))"
            case .interim: "\(count) interim (1xx, such as a WebSocket upgrade)"
            case .bodyNotRecorded: "\(count) whose body the archive did not keep whole"
            case .compressedBody: "\(count) whose body is still compressed"
            case .answeredAgain: "\(count) answered again (the newest answer is replayed)"
            case .keptEarlierAnswer: "\(count) 304 or temporary error after a full answer (the full answer is replayed)"
            case .headersTooLarge: "\(count) whose header section is over 80 KB, more than an answer may have"
            case .madeByKiosk: "\(count) answered by Kiosk itself, not the upstream (a 504 for what it had not stored)"
            case .unsendableURL: "\(count) whose URL no app can send (a user's name before the host, path escapes that are not UTF-8, or over 64 KB)"
            }
        }
    }

    /// What an import made of an archive: the rules that replay it, and how many entries gave none and
    /// why. `rules.count` plus `skippedCount` is `entries`.
    public struct Import: Sendable, Hashable {
        /// One rule per method and URL (secret query items and their order ignored), in the order the archive
        /// first asks for each; once added (`Debugger.importHAR`), with their ids.
        public var rules: [MockRule]
        /// How many entries the archive holds.
        public let entries: Int
        /// How many entries gave no rule, by reason; a reason with none is absent.
        public let skipped: [SkipReason: Int]
        /// The URL schemes of the entries skipped as `unsupportedScheme` (`data`, `ws`), sorted.
        public let skippedSchemes: [String]
        /// For each rule, in the same order, what the archive recorded of its exchange beyond what the rule replays.
        public var recorded: [Recorded] = []

        /// What a cache needs of a recorded exchange that a mock rule drops: when it was made, the answer's own `Date`
        /// and `Age`, and the request's credentials (`Authorization`, `Cookie`), to age the answer and key it by identity.
        public struct Recorded: Sendable, Hashable {
            /// The entry's `startedDateTime`.
            public var startedAt: Date?
            /// The answer's `Date` and `Age` fields, as recorded.
            public var date: String?
            public var age: String?
            /// The request's `Authorization` and `Cookie` values, as recorded (a redacting exporter's placeholders too).
            public var authorization: [String] = []
            public var cookies: [String] = []
            /// The request's other credential fields (`Redactor.isIdentityField`: X-Api-Key, Api-Key, X-Client-Secret…), as recorded.
            public var identities: [RequestRecord.HeaderField] = []
            /// The request's fields that the answer's `Vary` names, as recorded.
            public var varied: [RequestRecord.HeaderField] = []
            /// Whether the answer's text is replayed in UTF-8, and labelled so, where its Content-Type named a charset that
            /// cannot hold it or that Kiosk cannot write.
            public var inUTF8Instead = false
            /// The request's fields a cache reads beside its credentials and its variant: `Cache-Control`, `Pragma`, `Range`,
            /// and a CORS preflight's `Origin` and `Access-Control-Request-*`, as recorded.
            public var caching: [RequestRecord.HeaderField] = []
            /// Whether Kiosk's debugger made the answer rather than the upstream (its own export's `_kioskDecision` says
            /// `mocked` or `edited`): a mock's, a rule's or a breakpoint's edit.
            public var madeByDebugger = false

            /// Nothing recorded beyond the rule.
            public init(startedAt: Date? = nil, date: String? = nil, age: String? = nil, authorization: [String] = [], cookies: [String] = [],
                        varied: [RequestRecord.HeaderField] = []) {
                (self.startedAt, self.date, self.age, self.authorization, self.cookies) = (startedAt, date, age, authorization, cookies)
                self.varied = varied
            }

            /// Every credential value the request was recorded with: Authorization's, Cookie's and the other identity fields'.
            public var credentialValues: [String] { authorization + cookies + identities.map(\.value) }

        }

        /// How many entries gave no rule.
        public var skippedCount: Int { skipped.values.reduce(0, +) }

        /// How many rules answer in UTF-8, labelled so, where their recorded Content-Type named another charset
        /// (`Recorded.inUTF8Instead`).
        public var inUTF8Instead: Int { recorded.filter(\.inUTF8Instead).count }

        /// How many rules replay an answer the archive recorded for a request with credentials (Authorization, a cookie, a
        /// key header): a mock answers whoever asks.
        public var credentialed: Int { recorded.count { !$0.credentialValues.isEmpty } }

        /// "2 of them answer what was recorded for a request with credentials …" for `count` such rules; nil for none.
        public static func credentialedDescription(_ count: Int) -> String? {
            guard count > 0 else { return nil }
            return (count == 1 ? "1 of them answers what was recorded for a request with credentials" : "\(count) of them answer what was recorded for requests with credentials")
                + " (Authorization, a cookie or a key): as mock rules they answer every request to their URLs, whoever asks."
        }

        /// "2 answers' text is replayed in UTF-8, and labelled so: the charset their Content-Type named cannot hold it, or
        /// Kiosk cannot write it." for `count` such answers; nil for none.
        public static func inUTF8InsteadDescription(_ count: Int) -> String? {
            guard count > 0 else { return nil }
            return count == 1 ? "1 answer's text is replayed in UTF-8, and labelled so: the charset its Content-Type named cannot hold it, or Kiosk cannot write it."
                : "\(count) answers' text is replayed in UTF-8, and labelled so: the charset their Content-Type named cannot hold it, or Kiosk cannot write it."
        }

        /// "3 without a response, 21 failed (status 0 or below), 1 data: URL": the skipped entries by reason,
        /// in `SkipReason` order; empty when none was skipped.
        public var skippedDescription: String {
            SkipReason.allCases.compactMap { reason in
                skipped[reason].map { reason.phrase($0, schemes: skippedSchemes) }
            }.joined(separator: ", ")
        }
    }

    /// The mock rules replaying `data`, an archive written by Kiosk, a browser (Chrome, Firefox, Safari, IE),
    /// a proxy (mitmproxy, Charles, Fiddler) or a recorder (Playwright, Polly.JS, Insomnia...), and why the
    /// other entries give none (`SkipReason`). Every entry with a response to an http(s) request gives a
    /// rule: bodies as text, base64, Polly.JS hex, or Playwright's `content._file` read from `folder` (the
    /// archive's; nil for standard input, where such an entry refuses the archive). 204, 205, 304 and HEAD
    /// answers, redirects without a body and bodies known to be empty (size 0) answer with an empty body.
    /// When a method and URL come again (secret query items named in `ignoringQueryItems` and the order of
    /// query items aside), the last answer wins, except that a 304 or a temporary error (429, 5xx) does not
    /// replace a full answer; with `byRecordedRequest` (a cache's import), only when the recorded request's credentials
    /// and the fields its answer's `Vary` names are the same too. Throws `ImportError`, naming the JSON path, for a file that is not a HAR
    /// archive or an entry that is malformed: a field of the wrong type, a date without a time zone, an
    /// invalid URL, status or base64 body, a body file outside the archive's folder, or a method, header
    /// or MIME type breaking RFC 9110 (a rule replays them verbatim; request headers are never kept).
    public static func importArchive(_ data: consuming Data, origin: String, folder: URL?,
                                     ignoringQueryItems ignored: Set<String>, keepingContentCoding: Bool = false,
                                     byRecordedRequest: Bool = false) throws -> Import {
        let json = unwrapped(data)
        // Checked first without building anything: a malformed archive is refused, naming where, in no more memory
        // than its bytes. The check also reads which tool wrote it, which says how its bodies are kept.
        let creator: String?
        do {
            if case .string(let name)? = try OrderedJSON.check(json, capturing: ["log", "creator", "name"]) { creator = name } else { creator = nil }
        } catch {
            throw ImportError("Not a HAR file: it is not JSON (\(error)).")
        }
        var reader = EntryReader(folder: folder, isPolly: creator == "Polly.JS", isKiosk: creator == "Kiosk", origin: origin,
                                 keepsContentCoding: keepingContentCoding)
        var rules: [MockRule] = []
        var recorded: [Import.Recorded] = []
        var position: [String: Int] = [:]
        var skipped: [SkipReason: Int] = [:]
        var schemes: Set<String> = []
        var entryCount = 0
        // The entries are read one by one as the parse reaches them and not kept: an archive is held once, as bytes,
        // beside the rules it makes. The first entry's error is thrown after the archive's own fields are checked.
        var entryError: (any Error)?
        let root: OrderedJSON
        do {
            root = try OrderedJSON.parse(json, streaming: ["log", "entries"], maximumValues: maximumValues) { index, entry in
                entryCount = index + 1
                guard entryError == nil else { return }
                do {
                    switch try reader.read(entry.foundationValue, path: "log.entries[\(index)]") {
                    case .skipped(let reason, let scheme):
                        skipped[reason, default: 0] += 1
                        if let scheme { schemes.insert(scheme) }
                    case .rule(let rule, let details):
                        var key = MockRules.key(method: rule.method, urlPattern: rule.urlPattern, ignoring: ignored)
                        if byRecordedRequest {
                            // The cache keys by the URL as sent: a query in another order is another answer (the mock rules'
                            // match reads a query in any order, and keep one).
                            key += "\n" + rule.urlPattern
                            key += ([details.authorization.joined(separator: "\n"), details.cookies.joined(separator: "\n")]
                                + details.identities.map { "\($0.name.lowercased()):\($0.value)" }.sorted()
                                + details.varied.map { "\($0.name.lowercased())=\($0.value)" }.sorted()).map { "\n" + $0 }.joined()
                            // Credentials an exporter hid may be anyone's: two such entries are not one identity answered again.
                            // Nor is an answer Kiosk's debugger made (a mock's, an edit's) the upstream's answer again: the
                            // cache leaves it out, and it must not hide the upstream's own (logged just before an edit).
                            if details.credentialValues.contains(where: HAR.isHiddenCredential) || details.madeByDebugger {
                                key += "\n#\(index)"
                            }
                        }
                        guard let kept = position[key] else {
                            position[key] = rules.count
                            rules.append(rule)
                            recorded.append(details)
                            return
                        }
                        if onlyConfirmsOrFails(rule.status), !onlyConfirmsOrFails(rules[kept].status) {
                            skipped[.keptEarlierAnswer, default: 0] += 1
                        } else if let started = details.startedAt, let keptStarted = recorded[kept].startedAt, started < keptStarted {
                            // An archive out of time order (HAR 1.2 only recommends sorting its entries): the newest answer
                            // is the one replayed, as a cache uses the most recent of its answers (RFC 9111 §4.1).
                            skipped[.answeredAgain, default: 0] += 1
                        } else {
                            rules[kept] = rule
                            recorded[kept] = details
                            skipped[.answeredAgain, default: 0] += 1
                        }
                    }
                } catch {
                    entryError = error
                }
            }
        } catch let error as OrderedJSON.ParseError where error.reason == .tooManyValues {
            // Checked above as JSON: what stops this parse is its size, the archive around its entries or one entry.
            let path = error.path.hasPrefix("$.") ? String(error.path.dropFirst(2)) : error.path
            throw ImportError("\(path): the archive holds more than \(maximumValues.formatted(.number.locale(Locale(identifier: "en_US")))) JSON values around its entries, or in one "
                              + "entry, where a real one holds hundreds; Kiosk does not read it (it would take gigabytes).")
        }
        _ = consume data
        let log = try logObject(root.foundationValue)
        guard log["entries"] is [Any] else {
            throw ImportError("Not a HAR file: \"log.entries\" is missing or not an array.")
        }
        if let entryError { throw entryError }
        return Import(rules: rules, entries: entryCount, skipped: skipped, skippedSchemes: schemes.sorted(), recorded: recorded)
    }

    /// A 304 (it confirms a copy the client holds) or a status Kiosk retries (429, 5xx): an answer that
    /// says nothing new about the resource.
    static func onlyConfirmsOrFails(_ status: Int) -> Bool {
        status == 304 || status == 429 || status >= 500
    }

    // MARK: - The document

    /// The `log` object of an archive's document, its log-level fields checked when present.
    /// The most JSON values an import builds of the archive around its entries, and of each entry: a real entry holds
    /// hundreds (a big body is one string); each costs ~100 bytes built, so 20 million `{}` in 40 MB of an archive would
    /// take 2 GB. This keeps an import within a few times the archive's size, valid or not.
    static let maximumValues = 500_000

    private static func logObject(_ root: Any) throws -> [String: Any] {
        guard let log = (root as? [String: Any])?["log"] as? [String: Any] else {
            throw ImportError("Not a HAR file: there is no \"log\" object at the top.")
        }
        if let version = log["version"], !(version is String) {
            throw ImportError("log.version is not a string (HAR writes \"1.2\").")
        }
        if let creator = log["creator"] {
            guard let fields = creator as? [String: Any] else { throw ImportError("log.creator is not an object.") }
            for key in ["name", "version"] where fields[key] != nil && !(fields[key] is String) {
                throw ImportError("log.creator.\(key) is not a string.")
            }
        }
        if let pages = log["pages"] {
            guard let list = pages as? [Any] else { throw ImportError("log.pages is not an array.") }
            for (index, page) in list.enumerated() {
                guard let fields = page as? [String: Any] else { throw ImportError("log.pages[\(index)] is not an object.") }
                try checkDate(fields["startedDateTime"], path: "log.pages[\(index)].startedDateTime")
            }
        }
        return log
    }

    /// `data` without a leading UTF-8 BOM and, when it is JSONP (`name(…)` with an optional `;`, as HAR
    /// Viewer's `.harp` files are), without the call around the JSON.
    static func unwrapped(_ data: Data) -> Data {
        let body = data.starts(with: [0xEF, 0xBB, 0xBF]) ? data.dropFirst(3) : data
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        func isName(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "$"), UInt8(ascii: "."): true
            default: false
            }
        }
        // JSON starts with { or [; only a name can start JSONP, so anything else is left to the parser.
        guard let start = body.firstIndex(where: { !isSpace($0) }), isName(body[start]), !body[start].isDigit,
              let open = body[start...].firstIndex(of: UInt8(ascii: "(")), body[start..<open].allSatisfy(isName),
              var end = body.lastIndex(where: { !isSpace($0) }) else { return body }
        if body[end] == UInt8(ascii: ";"), let beforeSemicolon = body[..<end].lastIndex(where: { !isSpace($0) }) {
            end = beforeSemicolon
        }
        guard end > open, body[end] == UInt8(ascii: ")") else { return body }
        // A slice of `data`, sharing its bytes: an archive is never copied whole.
        return body[(open + 1)..<end]
    }

    /// An archive's ISO 8601 date and time (`2024-05-22T08:41:18.352-04:00`, fractions of a second or not), as a `Date`.
    static func date(_ text: String) -> Date? {
        // RFC 3339's other spellings as ISO 8601's: a `t` or a space for the `T`, a `z` for the `Z`, a leap second as the
        // second before it (Foundation takes none of them).
        var text = text
        if text.count > 10, let separator = text.index(text.startIndex, offsetBy: 10, limitedBy: text.endIndex),
           text[separator] == " " || text[separator] == "t" {
            text.replaceSubrange(separator...separator, with: "T")
        }
        if text.hasSuffix("z") { text = text.dropLast() + "Z" }
        if let leap = text.range(of: #"(?<=T\d\d:\d\d):60"#, options: .regularExpression) { text.replaceSubrange(leap, with: ":59") }
        return (try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text))
            ?? (try? Date.ISO8601FormatStyle().parse(text))
    }

    /// Throws unless `value` is absent or an ISO 8601 date and time with a time zone on a day the calendar has, as
    /// HAR's `startedDateTime` must be (`2024-05-22T08:41:18.352-04:00`, `…Z`).
    static func checkDate(_ value: Any?, path: String) throws {
        guard let value else { return }
        // RFC 3339's too: a `t` or a space for the `T`, a `z` for the `Z`, a leap second.
        let pattern = #/(?<year>\d{4})-(?<month>0[1-9]|1[0-2])-(?<day>0[1-9]|[12]\d|3[01])[Tt ]([01]\d|2[0-3]):[0-5]\d(:([0-5]\d|60)(\.\d+)?)?([Zz]|[+-]([01]\d|2[0-3]):?[0-5]\d)/#
        guard let text = value as? String, let match = try? pattern.wholeMatch(in: text) else {
            throw ImportError("\(path) is not an ISO 8601 date and time with a time zone (such as 2024-05-22T08:41:18.352Z).")
        }
        // Foundation's parser rolls a day past its month's last into the next month (2024-02-30 is March 1st): the
        // archive is wrong, and an entry would be dated and ordered by a day it does not name.
        let (year, month, day) = (Int(match.year) ?? 0, Int(match.month) ?? 1, Int(match.day) ?? 1)
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard day <= days else {
            throw ImportError("\(path) names a day its month does not have (\(text.prefix(10))).")
        }
    }

    /// A JSON number that is a whole number, as an `Int`.
    static func integer(_ value: Any?) -> Int? {
        (value as? NSNumber).flatMap { Int(exactly: $0.doubleValue) }
    }

    /// `url` with its scheme and its host in lower case, without the scheme's default port, and an empty path as `/` (RFC
    /// 3986 §6.2.3: `HTTP://A.TEST:80` is `http://a.test/`, one request, and the one an app sends); user information is
    /// left as written (such an entry is skipped: `unsendableURL`).
    static func normalizingOrigin(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return url }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        var host = authority[hostStart...].lowercased()
        if let defaultPort = ["http": ":80", "https": ":443"][scheme], host.hasSuffix(defaultPort) {
            host.removeLast(defaultPort.count)
        }
        let normalized = scheme + "://" + authority[..<hostStart] + host
        let afterAuthority = rest[authorityEnd...]
        let emptyPath = (scheme == "http" || scheme == "https") && !afterAuthority.hasPrefix("/")
        if normalized == url[..<authorityEnd] && !emptyPath { return url }
        return normalized + (emptyPath ? "/" : "") + afterAuthority
    }

    /// The scheme of `url`, lower-cased (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`, then a
    /// colon), or nil when it has none.
    static func scheme(of url: String) -> String? {
        guard let colon = url.firstIndex(of: ":") else { return nil }
        let scheme = url[..<colon].utf8
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isLetter || $0.isDigit || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") })
        else { return nil }
        return String(decoding: scheme, as: UTF8.self).lowercased()
    }

    // MARK: - Entries

    private enum EntryOutcome {
        case rule(MockRule, Import.Recorded)
        case skipped(SkipReason, scheme: String? = nil)
    }

    /// Reads entries one by one; it holds what reading them shares: the archive's folder, the producer's
    /// quirks, and how many bytes of body files may still be read.
    private struct EntryReader {
        let folder: URL?
        let isPolly: Bool
        /// Whether Kiosk wrote the archive: its export keeps a body it cannot decode (brotli) as sent, in base64.
        let isKiosk: Bool
        let origin: String
        /// Whether a body kept as sent, still content-coded, is taken with its `Content-Encoding` (the proxy cache replays
        /// answers byte for byte) rather than skipped (a mock's body is decoded content).
        let keepsContentCoding: Bool
        /// Body files together are capped like the archive itself, so no archive can make an import read
        /// more than twice `maximumImportBytes`.
        var bodyFileBudget = HAR.maximumImportBytes

        mutating func read(_ raw: Any, path: String) throws -> EntryOutcome {
            guard let entry = raw as? [String: Any] else { throw ImportError("\(path) is not an object.") }
            try HAR.checkDate(entry["startedDateTime"], path: path + ".startedDateTime")
            guard let request = entry["request"] as? [String: Any] else {
                throw ImportError("\(path).request is missing or not an object.")
            }
            guard let method = request["method"] as? String else { throw ImportError("\(path).request.method is missing or not a string.") }
            guard let written = request["url"] as? String else { throw ImportError("\(path).request.url is missing or not a string.") }
            // Without its fragment, which no request carries (a browser records an OAuth redirect's `#access_token=`):
            // kept, the rule would never match, and a page would show the token.
            // Written as the proxy writes an app's target (a stray `%` as `%25`...), so a replay finds it.
            // Its scheme and host in lower case, without a default port, as apps send them (`HTTP://A.TEST:80/` is `http://a.test/`).
            let beforeFragment = written.utf8.firstIndex(of: UInt8(ascii: "#")).map { written[..<$0] } ?? Substring(written)
            // A URL far past what the proxy reads is skipped below without being escaped whole first (a 150 MB one took a
            // minute): escaping only lengthens it, and the origin's normalising shortens it by a default port at most.
            let oversized = beforeFragment.utf8.count > HAR.maximumRequestTargetBytes + 8
            let url = HAR.normalizingOrigin(HTTPSyntax.escapingDisallowed(String(oversized ? beforeFragment.prefix(1024) : beforeFragment)))
            let response: [String: Any]
            switch entry["response"] {
            case nil, is NSNull: return .skipped(.noResponse)
            case let object as [String: Any]: response = object
            default: throw ImportError("\(path).response is not an object.")
            }
            guard let status = HAR.integer(response["status"]) else {
                throw ImportError("\(path).response.status is missing or not a whole number.")
            }
            let scheme = HAR.scheme(of: url)
            if let scheme, scheme != "http", scheme != "https" { return .skipped(.unsupportedScheme, scheme: scheme) }
            // A failed request may have any URL (even ""): it is skipped before the URL is checked.
            guard status > 0 else { return .skipped(.failed) }
            if Self.madeByKiosk(entry, status: status) { return .skipped(.madeByKiosk) }
            guard scheme != nil else { throw ImportError("\(path).request.url is not an absolute URL.") }
            guard !oversized, url.utf8.count <= HAR.maximumRequestTargetBytes, HTTPSyntax.escapeProblem(in: url) == nil else {
                return .skipped(.unsendableURL)
            }
            guard let parsed = URL(string: url), parsed.host?.isEmpty == false, (1...65_535).contains(parsed.port ?? 80) else {
                throw ImportError("\(path).request.url is not a valid http(s) URL.")
            }
            // User information before the host: no app's request carries it (a client sends it as Authorization, which the
            // entry's headers may not show), so a rule would never match it, would keep a password in clear, and in the
            // proxy's cache, without it, would be an answer for no identity — anyone's.
            if parsed.user(percentEncoded: true) != nil { return .skipped(.unsendableURL) }
            // A rule keeps the method and the response's fields verbatim, so a CR or LF in one would become
            // a second header wherever it is written back out: refuse the archive, naming the spot.
            guard HTTPSyntax.isToken(method) else {
                throw ImportError("\(path).request.method is not an HTTP method "
                                  + "(RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            guard (100...599).contains(status) else {
                throw ImportError("\(path).response.status (\(status)) is not an HTTP status (100 to 599).")
            }
            guard status >= 200 else { return .skipped(.interim) }
            var (headers, contentEncoding) = try responseHeaders(response["headers"], method: method, path: path + ".response.headers")
            // Each field as a line: `name: value` and its CRLF.
            guard headers.reduce(0, { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }) <= HAR.maximumHeaderSectionBytes else {
                return .skipped(.headersTooLarge)
            }
            let content: [String: Any]
            switch response["content"] {
            case nil: content = [:]
            case let object as [String: Any]: content = object
            default: throw ImportError("\(path).response.content is not an object.")
            }
            var mimeType: String
            switch content["mimeType"] {
            case nil: mimeType = ""
            case let text as String: mimeType = text
            default: throw ImportError("\(path).response.content.mimeType is not a string.")
            }
            guard HTTPSyntax.isFieldValue(mimeType) else {
                throw ImportError("\(path).response.content.mimeType \(HAR.invalidValue)")
            }
            // The charset the answer will be replayed under: its recorded Content-Type's, else the one `mimeType` names.
            let typeIndex = headers.lastIndex { $0.name.lowercased() == "content-type" }
            let charset = HAR.charset(of: typeIndex.map { headers[$0].value }) ?? HAR.charset(of: mimeType)
            guard let (body, inUTF8Instead) = try body(status: status, method: method, content: content, contentEncoding: contentEncoding,
                                                       charset: charset, path: path + ".response.content") else {
                return .skipped(.bodyNotRecorded)
            }
            // Text its label cannot hold, or a label Kiosk cannot write, is replayed as UTF-8: said so by the answer, which
            // must not name one charset and hold another's bytes (the app would read mojibake).
            if inUTF8Instead {
                if let typeIndex, HAR.charset(of: headers[typeIndex].value) != nil {
                    headers[typeIndex].value = HTTPSyntax.replacingParameter("charset", in: headers[typeIndex].value, with: "utf-8")
                } else if typeIndex == nil {
                    mimeType = HTTPSyntax.replacingParameter("charset", in: mimeType, with: "utf-8")
                }
            }
            // Kiosk's own mark of a body cut by its capture limit.
            if response["_kioskTruncated"] as? Bool == true { return .skipped(.bodyNotRecorded) }
            // An answer that failed after its head (the upstream cut its body, a stall): its status and an error, its body
            // no more than what came.
            if let error = entry["_kioskError"] as? String, !error.isEmpty { return .skipped(.bodyNotRecorded) }
            if let coding = Self.stillCoded(body, contentEncoding: contentEncoding, content: content,
                                            bodySize: HAR.integer(response["bodySize"]), writtenByKiosk: isKiosk) {
                guard keepsContentCoding else { return .skipped(.compressedBody) }
                headers.append(RequestRecord.HeaderField(name: "Content-Encoding", value: coding))
            }
            // Chrome writes x-unknown when it does not know the type: that is no Content-Type to replay.
            if !body.isEmpty, !mimeType.isEmpty, mimeType != "x-unknown",
               !headers.contains(where: { $0.name.lowercased() == "content-type" }) {
                headers.append(RequestRecord.HeaderField(name: "Content-Type", value: mimeType))
            }
            // A recorded URL is one address: a `*` in it (`/users/*`, `?fields=*`) is that character, not a rule's wildcard.
            var recorded = Self.recorded(entry, request: request, response: response)
            recorded.inUTF8Instead = inUTF8Instead
            return .rule(MockRule(method: method, urlPattern: url.replacingOccurrences(of: "*", with: "%2A"), status: status, headers: headers,
                                  body: body, origin: origin), recorded)
        }

        /// Whether Kiosk's own export says its proxy made the entry's answer (`SkipReason.madeByKiosk`): a 504 for what its
        /// store did not hold (`--offline`, `only-if-cached`), its Cache-Status a miss. A stored answer given offline (a
        /// hit, or one standing in for an unreachable upstream) is the upstream's, and kept.
        static func madeByKiosk(_ entry: [String: Any], status: Int) -> Bool {
            guard status == 504, ["offline", "only-if-cached"].contains(entry["_kioskDecision"] as? String ?? "") else { return false }
            let members = ((entry["_kioskCacheStatus"] as? String) ?? "").lowercased().split(separator: ";")
                .map { $0.trimmingCharacters(in: .whitespaces) }
            return !members.contains("hit") && members.contains { $0.hasPrefix("fwd=") && $0.hasSuffix("miss") }
        }

        /// What a cache needs of the entry beyond the rule (see `Import.Recorded`); fields of the wrong shape are left out.
        static func recorded(_ entry: [String: Any], request: [String: Any], response: [String: Any]) -> Import.Recorded {
            let fields = { (object: [String: Any], name: String) -> [String] in
                ((object["headers"] as? [Any]) ?? []).compactMap { field in
                    guard let field = field as? [String: Any], (field["name"] as? String)?.lowercased() == name else { return nil }
                    return field["value"] as? String
                }
            }
            // The request's fields the answer's Vary names, which pick its variant.
            let named = Set(fields(response, "vary").flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty && $0 != "*" })
            let varied = ((request["headers"] as? [Any]) ?? []).compactMap { field -> RequestRecord.HeaderField? in
                guard let field = field as? [String: Any], let name = field["name"] as? String, named.contains(name.lowercased()),
                      let value = field["value"] as? String else { return nil }
                return RequestRecord.HeaderField(name: name, value: value)
            }
            var recorded = Import.Recorded(startedAt: (entry["startedDateTime"] as? String).flatMap(HAR.date),
                                           date: fields(response, "date").first, age: fields(response, "age").first,
                                           authorization: fields(request, "authorization"), cookies: fields(request, "cookie"), varied: varied)
            recorded.identities = ((request["headers"] as? [Any]) ?? []).compactMap { field -> RequestRecord.HeaderField? in
                guard let field = field as? [String: Any], let name = field["name"] as? String, Redactor.isIdentityField(name.lowercased()),
                      let value = field["value"] as? String else { return nil }
                return RequestRecord.HeaderField(name: name, value: value)
            }
            recorded.caching = ((request["headers"] as? [Any]) ?? []).compactMap { field -> RequestRecord.HeaderField? in
                guard let field = field as? [String: Any], let name = field["name"] as? String, let value = field["value"] as? String
                else { return nil }
                let lowered = name.lowercased()
                guard ["cache-control", "pragma", "range", "origin"].contains(lowered) || lowered.hasPrefix("access-control-request-")
                else { return nil }
                return RequestRecord.HeaderField(name: name, value: value)
            }
            recorded.madeByDebugger = ["mocked", "edited"].contains(entry["_kioskDecision"] as? String ?? "")
            return recorded
        }

        /// The `Content-Encoding` a recorded body is still coded with, or nil when it is the content itself, as HAR wants
        /// it (browsers, mitmproxy, Charles and Playwright write it decoded; Polly.JS keeps the bytes as sent in hex, and
        /// Kiosk's export a body it cannot decode, brotli, as sent in base64). A gzip body says so by its first bytes;
        /// another coding (br, deflate, zstd) has no such mark. Then HAR's sizes tell, when they differ — `content.size`
        /// is the decoded length, `bodySize` the bytes sent — and else who wrote it: a browser's base64 body (an image, a
        /// font) is decoded, Kiosk's is as sent.
        static func stillCoded(_ body: Data, contentEncoding: String?, content: [String: Any], bodySize: Int?,
                               writtenByKiosk: Bool) -> String? {
            guard let coding = contentEncoding?.trimmingCharacters(in: .whitespaces), !body.isEmpty,
                  !coding.isEmpty, coding.lowercased() != "identity" else { return nil }
            // gzip's bytes tell it when it was applied last (the field lists codings in the order applied: `gzip, br` is
            // brotli over gzip, whose bytes are brotli's).
            let outermost = coding.split(separator: ",").last.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
            if outermost == "gzip" || outermost == "x-gzip" { return body.starts(with: [0x1F, 0x8B]) ? coding : nil }
            // `compression` (the bytes the coding saved) is written beside a decoded body, by Chrome and by Kiosk.
            if content["compression"] is NSNumber { return nil }
            // A decoded text body is text.
            guard (content["encoding"] as? String)?.lowercased() == "base64" else { return nil }
            if let size = HAR.integer(content["size"]), let sent = bodySize, size > 0, sent > 0, size != sent {
                if body.count == size { return nil }
                if body.count == sent { return coding }
            }
            return writtenByKiosk ? coding : nil
        }

        /// The body a rule answers with, or nil when the archive did not keep it; with whether its text was written in
        /// UTF-8 where `charset` (the label it is replayed under) names another. `path` is the content's.
        private mutating func body(status: Int, method: String, content: [String: Any], contentEncoding: String?, charset: String?,
                                   path: String) throws -> (bytes: Data, inUTF8Instead: Bool)? {
            // These answers have no body whatever the archive holds (a browser fills a 304's from its cache).
            if [204, 205, 304].contains(status) || method.uppercased() == "HEAD" { return (Data(), false) }
            // A null text is none, as some writers put it for a body they did not keep.
            if let value = content["text"], !(value is NSNull) {
                guard let text = value as? String else { throw ImportError("\(path).text is not a string.") }
                if (content["encoding"] as? String)?.lowercased() == "base64" {
                    // Whitespace is allowed (MIME-style line breaks); anything else that is not base64 is not.
                    guard let decoded = Data(base64Encoded: String(text.unicodeScalars.filter { !$0.properties.isWhitespace })) else {
                        throw ImportError("\(path).text is marked base64 but is not.")
                    }
                    return (decoded, false)
                }
                if isPolly, let bytes = HAR.pollyBytes(text, content: content, isEncoded: contentEncoding != nil) { return (bytes, false) }
                let size = HAR.integer(content["size"])
                // The text is the body decoded by its charset: encoded back by it, the app gets the bytes it was sent.
                // (Unless the size the archive gives is its UTF-8's and not those bytes': Kiosk's own export of an answer that
                // was UTF-8 under a Latin-1 label, which it read as UTF-8.)
                let labelled = HAR.encoded(text, charset: charset)
                if let bytes = labelled, !(size == text.utf8.count && bytes.count != text.utf8.count) { return (bytes, false) }
                // Bytes read as Latin-1, one character each (mitmproxy writes so a body whose type names no charset: an
                // image it does not find mostly binary, a text/plain): as many characters as `size` says bytes, where
                // UTF-8 would make more. Encoded as UTF-8, a PNG would grow and break.
                if let size, size > 0, text.utf8.count != size, text.unicodeScalars.count == size,
                   text.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) {
                    return (Data(text.unicodeScalars.map { UInt8($0.value) }), false)
                }
                // Else UTF-8's: under a label that cannot hold the text, or one Kiosk cannot write (ASCII is the same bytes in any
                // label a server sends; UTF-16's is written above), the answer says UTF-8 instead.
                let inUTF8Instead = labelled == nil && !(charset.map(HAR.isUTF8) ?? true) && !text.unicodeScalars.allSatisfy(\.isASCII)
                return (Data(text.utf8), inUTF8Instead)
            }
            if let value = content["_file"] {
                guard let name = value as? String else { throw ImportError("\(path)._file is not a string.") }
                return (try bodyFile(name, path: path + "._file"), false)
            }
            // Nothing kept: fine for a redirect (its Location is what counts) or a body known to be empty.
            if (300...399).contains(status) || HAR.integer(content["size"]) == 0 { return (Data(), false) }
            return nil
        }

        /// The bytes of Playwright's `content._file`: a file in the archive's folder, never outside it.
        private mutating func bodyFile(_ name: String, path: String) throws -> Data {
            guard let folder else {
                throw ImportError("\(path) names a body file beside the archive (\(name)), but an archive read from "
                                  + "standard input has no folder: import the archive by its path.")
            }
            let parts = name.split(whereSeparator: { $0 == "/" || $0 == "\\" })
            guard !name.isEmpty, !name.hasPrefix("/"), !name.hasPrefix("\\"), !name.contains("\0"), !parts.contains("..") else {
                throw ImportError("\(path) (\(name)) must name a file in the archive's folder: an absolute path or .. is refused.")
            }
            let base = folder.standardizedFileURL.resolvingSymlinksInPath().path
            let target = URL(fileURLWithPath: base).appendingPathComponent(name).standardizedFileURL.resolvingSymlinksInPath().path
            // Only a symbolic link can lead out now; "." names the folder itself, which fails below as one.
            guard target == base || target.hasPrefix(base.hasSuffix("/") ? base : base + "/") else {
                throw ImportError("\(path) (\(name)) leads outside the archive's folder through a symbolic link.")
            }
            do {
                let data = try HAR.readArchive(atPath: target, limit: bodyFileBudget, regularFileOnly: true)
                bodyFileBudget -= data.count
                return data
            } catch let error as ImportError {
                throw ImportError("\(path) (\(name)): \(error.message)")
            }
        }
    }

    /// Why a field value is refused, after its path.
    private static let invalidValue = "is not a valid HTTP field value (CR, LF, NUL and other control characters "
        + "but the tab are not allowed)."

    /// The fields of a HAR `headers` array at `path` that a rule answering `method` keeps (`MockRule.keepsRecorded`), each
    /// checked against RFC 9110, and the
    /// response's Content-Encoding. Entries that are not name/value pairs of strings are skipped; dropped
    /// fields (cookies, hop-by-hop, HTTP/2 pseudo-headers such as `:status`) need only a valid name, since
    /// their values are never written out (Firebug joins two Set-Cookie values with a line feed).
    private static func responseHeaders(_ value: Any?, method: String, path: String) throws
        -> (fields: [RequestRecord.HeaderField], contentEncoding: String?) {
        guard let value else { return ([], nil) }
        guard let entries = value as? [Any] else { throw ImportError("\(path) is not an array.") }
        var fields: [RequestRecord.HeaderField] = []
        var contentEncoding: String?
        for (position, entry) in entries.enumerated() {
            guard let header = entry as? [String: Any], let name = header["name"] as? String,
                  let value = header["value"] as? String else { continue }
            let isPseudo = name.hasPrefix(":")
            guard HTTPSyntax.isToken(isPseudo ? String(name.dropFirst()) : name) else {
                throw ImportError("\(path)[\(position)].name is not a valid HTTP header name "
                                  + "(RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            let lowercased = name.lowercased()
            if lowercased == "content-encoding" { contentEncoding = contentEncoding.map { $0 + ", " + value } ?? value }
            let field = RequestRecord.HeaderField(name: name, value: value)
            if isPseudo || !MockRule.keepsRecorded(field, method: method) { continue }
            guard HTTPSyntax.isFieldValue(value) else { throw ImportError("\(path)[\(position)].value \(invalidValue)") }
            fields.append(field)
        }
        return (fields, contentEncoding)
    }

    // MARK: - Polly.JS

    /// A body Polly.JS kept as hex: a JSON array of hex chunks (its `_isBinary` bodies, and encoded ones), or
    /// one hex string exactly twice the body's size (Polly 2's binary bodies). Nil when `text` is neither,
    /// so a text body that merely looks like hex stays text.
    static func pollyBytes(_ text: String, content: [String: Any], isEncoded: Bool) -> Data? {
        if text.hasPrefix("["), content["_isBinary"] as? Bool == true || isEncoded {
            guard let chunks = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String] else { return nil }
            var bytes = Data()
            for chunk in chunks {
                guard let part = hexBytes(chunk) else { return nil }
                bytes.append(part)
            }
            return bytes
        }
        guard let size = integer(content["size"]), size > 0, text.utf8.count == 2 * size else { return nil }
        return hexBytes(text)
    }

    /// The bytes of a string of hex digit pairs, or nil.
    static func hexBytes(_ text: String) -> Data? {
        let digits = Array(text.utf8)
        guard digits.count.isMultiple(of: 2) else { return nil }
        var bytes = Data(capacity: digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Hex.value(of: digits[index]), let low = Hex.value(of: digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

private extension UInt8 {
    var isLetter: Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self | 0x20) }
    var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
}

extension HAR {
    /// The largest archive an import reads: far above a real session's archive, far below what would
    /// exhaust a laptop's memory (an archive is held whole while it is parsed).
    public static let maximumImportBytes = 256 << 20

    /// The largest header section an imported answer may have: what an upstream's answer may (NIO's HTTP/1 parser,
    /// llhttp, reads 80 KB of it).
    static let maximumHeaderSectionBytes = 80 << 10
    /// The longest URL an app's request line can carry through the proxy, whose header section (request line included)
    /// is read up to 64 KB.
    static let maximumRequestTargetBytes = 64 << 10

    /// The bytes of the archive at `path` (`-` for standard input), at most `limit` of them. A regular
    /// file (standard input redirected from one included) is refused from its size before a byte is read;
    /// a pipe, or a file that grows while read, as soon as it passes the limit, so memory stays bounded.
    /// `regularFileOnly` (a body's file beside an archive) refuses anything else: a pipe, waited on for ever (an archive may
    /// be one, `<(…)`), a device, a folder.
    public static func readArchive(atPath path: String, limit: Int = maximumImportBytes, regularFileOnly: Bool = false) throws -> Data {
        let handle: FileHandle
        if path == "-" {
            handle = .standardInput
        } else if regularFileOnly {
            // Opened without waiting for a pipe's writer, and what it is told by the descriptor itself (no second look at
            // the path, which could be swapped in between).
            let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard descriptor >= 0 else {
                let failure = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                throw ImportError("Cannot read it: \(KioskError.fileReason(failure, path: path)).")
            }
            let status = FileStatus(descriptor: descriptor)
            guard status?.kind == .regular else {
                close(descriptor)
                throw ImportError(status?.kind == .directory ? "It is a folder, not a body's file."
                                  : "It is not a regular file (a pipe, a device), not a body's file.")
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        } else {
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw ImportError("Cannot read it: \(KioskError.fileReason(error, path: path)).")
            }
        }
        defer { if path != "-" { try? handle.close() } }
        let status = FileStatus(descriptor: handle.fileDescriptor)
        // Opening a folder for reading works; reading it fails with words no user can act on.
        if status?.kind == .directory { throw ImportError("It is a folder, not an archive: give the .har file in it.") }
        let knownSize = status?.kind == .regular ? status.map { Int($0.size) } : nil
        if let knownSize, knownSize > limit { throw tooLarge(size: knownSize, limit: limit) }
        var data = Data()
        data.reserveCapacity(knownSize ?? 0)
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                if data.count > limit { throw tooLarge(size: nil, limit: limit) }
            }
        } catch let error as ImportError {
            throw error
        } catch {
            throw ImportError("Cannot read it: \(KioskError.fileReason(error, path: path)).")
        }
        return data
    }

    /// "Too large: 1024 MiB (1073741824 bytes); an import reads at most 256 MiB."
    private static func tooLarge(size: Int?, limit: Int) -> ImportError {
        let shown = size.map { "\(mebibytes($0)) (\($0) bytes)" } ?? "over \(mebibytes(limit))"
        return ImportError("Too large: \(shown); an import reads at most \(mebibytes(limit)).")
    }

    private static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }
}

extension OrderedJSON {
    /// The value as JSONSerialization gives it: objects as `[String: Any]` (the last of duplicate keys), arrays as
    /// `[Any]`, numbers as `NSNumber`, null as `NSNull`.
    var foundationValue: Any {
        switch self {
        case .object(let members):
            var object: [String: Any] = [:]
            for member in members { object[member.key] = member.value.foundationValue }
            return object
        case .array(let values): return values.map(\.foundationValue)
        case .string(let text): return text
        case .number(let text):
            if let whole = Int(text) { return NSNumber(value: whole) }
            return NSNumber(value: Double(text) ?? .nan)
        case .bool(let value): return NSNumber(value: value)
        case .null: return NSNull()
        }
    }
}
