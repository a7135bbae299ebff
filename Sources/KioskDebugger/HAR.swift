public import Foundation
public import KioskCore

/// HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/) export of the request log. Records
/// are redacted at capture, so an archive never holds a secret. Kiosk's own facts ride in `_kiosk…`
/// fields (the spec's extension convention) and in `cache.comment`, which other tools ignore.
public enum HAR {
    /// The archive of `records` (oldest first in the file, as HAR viewers expect), pretty-printed JSON.
    public static func export(_ records: [RequestRecord]) throws -> Data {
        let entries = records.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }.map(Entry.init)
        let creator = Creator(name: "Kiosk", version: KioskVersion.current)
        let document = Document(log: Log(version: "1.2", creator: creator, entries: entries))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        return try encoder.encode(document)
    }

    /// A record as a `curl` command line (redacted: the secrets read `<redacted>`), quoted for a POSIX shell.
    public static func curl(_ record: RequestRecord) -> String {
        var parts = ["curl"]
        if record.method != "GET" { parts += ["-X", quote(record.method)] }
        parts.append(quote(record.url))
        for header in record.requestHeaders { parts += ["-H", quote("\(header.name): \(header.value)")] }
        if let body = record.requestBody, let text = String(data: body.data, encoding: .utf8) {
            parts += ["--data-raw", quote(text)]
        }
        return parts.joined(separator: " ")
    }

    /// Single-quoted for a POSIX shell: nothing inside is interpreted, and a quote is closed, escaped, reopened.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    // MARK: - The document

    struct Document: Encodable {
        let log: Log
    }

    struct Log: Encodable {
        let version: String
        let creator: Creator
        let entries: [Entry]
    }

    struct Creator: Encodable {
        let name, version: String
    }

    struct NameValue: Encodable {
        let name, value: String
    }

    struct Entry: Encodable {
        let startedDateTime: String
        let time: Double
        let request: Request
        let response: Response
        let cache: Cache
        let timings: Timings
        let _kioskId: Int64
        let _kioskSource: String?
        let _kioskEndpoint, _kioskDecision: String
        let _kioskError: String?
        /// The mocks, rewrite rules and breakpoints that acted on the exchange; absent when none did.
        let _kioskTouchedBy: [ExchangeTouch]?

        init(_ record: RequestRecord) {
            startedDateTime = HAR.timestamp(record.startedAt)
            time = HAR.milliseconds(record.timings.total)
            request = Request(record)
            response = Response(record)
            cache = Cache(comment: "Kiosk cache decision: \(record.decision.rawValue)")
            timings = Timings(record.timings)
            _kioskId = record.id
            _kioskSource = record.source?.rawValue
            _kioskEndpoint = record.endpoint
            _kioskDecision = record.decision.rawValue
            _kioskError = record.error
            _kioskTouchedBy = record.touchedBy.isEmpty ? nil : record.touchedBy
        }
    }

    struct Request: Encodable {
        let method, url: String
        let httpVersion = "HTTP/1.1"
        let cookies: [NameValue] = []
        let headers, queryString: [NameValue]
        let headersSize = -1
        let bodySize: Int
        let postData: PostData?

        init(_ record: RequestRecord) {
            method = record.method
            url = record.url
            headers = record.requestHeaders.map { NameValue(name: $0.name, value: $0.value) }
            queryString = URLComponents(string: record.url)?.queryItems?.map { NameValue(name: $0.name, value: $0.value ?? "") } ?? []
            bodySize = record.requestBody?.originalSize ?? 0
            postData = record.requestBody.map { body in
                PostData(mimeType: record.requestHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? "",
                         text: String(decoding: body.data, as: UTF8.self))
            }
        }
    }

    struct PostData: Encodable {
        let mimeType, text: String
    }

    struct Response: Encodable {
        let status: Int
        let statusText: String
        let httpVersion = "HTTP/1.1"
        let cookies: [NameValue] = []
        let headers: [NameValue]
        let content: Content
        let redirectURL = ""
        let headersSize = -1
        let bodySize: Int
        let _kioskTruncated: Bool

        init(_ record: RequestRecord) {
            // HAR has no "no response": browsers write status 0 for a request that failed, and so does Kiosk.
            status = record.status ?? 0
            statusText = record.status.map { HTTPStatusText.phrase($0) } ?? ""
            headers = record.responseHeaders.map { NameValue(name: $0.name, value: $0.value) }
            let mimeType = record.responseHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? ""
            content = Content(record.responseBody, mimeType: mimeType)
            bodySize = record.status == 304 ? 0 : (record.responseBody?.originalSize ?? -1)
            _kioskTruncated = record.responseBody?.isTruncated ?? false
        }
    }

    struct Content: Encodable {
        let size: Int
        let mimeType: String
        let text, encoding, comment: String?

        init(_ body: CapturedBody?, mimeType: String) {
            self.mimeType = mimeType
            guard let body else {
                size = 0
                text = nil
                encoding = nil
                comment = nil
                return
            }
            size = body.originalSize
            let json = BodyJSON(body)
            text = json.text ?? json.base64
            encoding = json.text == nil ? "base64" : nil
            comment = body.isTruncated ? "truncated by Kiosk's capture limit to \(body.data.count) of \(body.originalSize) bytes" : nil
        }
    }

    struct Cache: Encodable {
        let comment: String
    }

    struct Timings: Encodable {
        let blocked: Double
        let dns = -1.0
        let connect: Double
        let ssl = -1.0
        let send = 0.0
        let wait, receive: Double

        init(_ timings: RequestTimings) {
            blocked = timings.queued.map(HAR.milliseconds) ?? -1
            connect = timings.connect.map(HAR.milliseconds) ?? -1
            // Without a measured time to first byte (a store answer), the whole time is waiting.
            wait = HAR.milliseconds(timings.firstByte ?? timings.total)
            receive = HAR.milliseconds(timings.download ?? 0)
        }
    }

    static func milliseconds(_ seconds: TimeInterval) -> Double { (seconds * 1_000_000).rounded() / 1000 }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// The reason phrases HAR's `statusText` wants, for the statuses upstreams send.
enum HTTPStatusText {
    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 409: "Conflict"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}

extension HAR {
    /// Why an archive cannot be imported.
    public struct ImportError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Mock rules that replay the responses of an archive written by Kiosk, Chrome, Firefox or mitmproxy:
    /// one per method and URL (the last response wins), bodies decoded from base64 when so marked.
    /// Entries without a response (status 0), 304s (nothing to replay without a stored copy) and entries
    /// without a body are skipped. Throws with a reason, importing nothing, when the file is not a HAR or
    /// when any entry's method, response header or MIME type breaks RFC 9110 (its JSON path is named).
    /// Request headers are not checked: a rule never keeps them.
    public static func mockRules(fromArchive data: Data, origin: String) throws -> [MockRule] {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            let detail = parseReason(data)
            throw ImportError(message: "Not a HAR file: it is not JSON\(detail.isEmpty ? "" : " (\(detail))").")
        }
        guard let log = (root as? [String: Any])?["log"] as? [String: Any] else {
            throw ImportError(message: "Not a HAR file: there is no \"log\" object at the top.")
        }
        guard let entries = log["entries"] as? [Any] else {
            throw ImportError(message: "Not a HAR file: \"log.entries\" is missing or not an array.")
        }
        var rules: [String: MockRule] = [:]
        var order: [String] = []
        for (index, rawEntry) in entries.enumerated() {
            guard let entry = rawEntry as? [String: Any],
                  let request = entry["request"] as? [String: Any], let response = entry["response"] as? [String: Any] else {
                throw ImportError(message: "log.entries[\(index)] has no request or response object.")
            }
            guard let method = request["method"] as? String, let url = request["url"] as? String,
                  let scheme = URL(string: url)?.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                throw ImportError(message: "log.entries[\(index)].request has no method or no http(s) url.")
            }
            // A rule keeps the method and the response's fields verbatim, so a CR or LF in one would become
            // a second header wherever it is written back out: refuse the archive, naming the spot.
            guard HTTPSyntax.isToken(method) else {
                throw ImportError(message: "log.entries[\(index)].request.method is not an HTTP method "
                                  + "(RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            guard let status = (response["status"] as? NSNumber)?.intValue else {
                throw ImportError(message: "log.entries[\(index)].response.status is missing or not a number.")
            }
            let content = response["content"] as? [String: Any] ?? [:]
            var headers = try responseHeaders(response["headers"] as? [Any] ?? [],
                                              path: "log.entries[\(index)].response.headers")
            let mimeType = content["mimeType"] as? String ?? ""
            guard HTTPSyntax.isFieldValue(mimeType) else {
                throw ImportError(message: "log.entries[\(index)].response.content.mimeType \(invalidValue)")
            }
            guard (100...599).contains(status), status != 304 else { continue }
            guard let text = content["text"] as? String else { continue }
            let body: Data
            if (content["encoding"] as? String)?.lowercased() == "base64" {
                guard let decoded = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    throw ImportError(message: "log.entries[\(index)].response.content.text is marked base64 but is not.")
                }
                body = decoded
            } else {
                body = Data(text.utf8)
            }
            // The body is stored decoded and whole, and cookies are never replayed.
            let dropped: Set<String> = ["content-encoding", "content-length", "transfer-encoding", "connection", "set-cookie",
                                        "keep-alive", MockingTransport.markerHeader.lowercased()]
            headers.removeAll { dropped.contains($0.name.lowercased()) || $0.name.hasPrefix(":") }
            if !headers.contains(where: { $0.name.lowercased() == "content-type" }), !mimeType.isEmpty {
                headers.append(RequestRecord.HeaderField(name: "Content-Type", value: mimeType))
            }
            let key = method.uppercased() + " " + url
            if rules[key] == nil { order.append(key) }
            rules[key] = MockRule(method: method, urlPattern: url, status: status, headers: headers, body: body, origin: origin)
        }
        guard !order.isEmpty else {
            throw ImportError(message: "The archive has no response with a body to replay (\(entries.count) entries).")
        }
        return order.compactMap { rules[$0] }
    }

    /// Why a field value is refused, after its path.
    private static let invalidValue = "is not a valid HTTP field value (CR, LF, NUL and other control characters "
        + "but the tab are not allowed)."

    /// The fields of a HAR `headers` array at `path`, each checked against RFC 9110. Entries that are not
    /// name/value pairs of strings are skipped, as before; HTTP/2 pseudo-headers (`:status`) are checked
    /// without their colon and dropped later.
    private static func responseHeaders(_ entries: [Any], path: String) throws -> [RequestRecord.HeaderField] {
        var fields: [RequestRecord.HeaderField] = []
        for (position, entry) in entries.enumerated() {
            guard let header = entry as? [String: Any], let name = header["name"] as? String,
                  let value = header["value"] as? String else { continue }
            guard HTTPSyntax.isToken(name.hasPrefix(":") ? String(name.dropFirst()) : name) else {
                throw ImportError(message: "\(path)[\(position)].name is not a valid HTTP header name "
                                  + "(RFC 9110 token: letters, digits and !#$%&'*+-.^_`|~ only).")
            }
            guard HTTPSyntax.isFieldValue(value) else {
                throw ImportError(message: "\(path)[\(position)].value \(invalidValue)")
            }
            fields.append(RequestRecord.HeaderField(name: name, value: value))
        }
        return fields
    }

    private static func parseReason(_ data: Data) -> String {
        do {
            _ = try OrderedJSON.parse(data)
            return ""
        } catch {
            return String(describing: error)
        }
    }
}

extension HAR {
    /// The largest archive an import reads: far above a real session's archive, far below what would
    /// exhaust a laptop's memory (an archive is held whole while it is parsed).
    public static let maximumImportBytes = 256 << 20

    /// The bytes of the archive at `path` (`-` for standard input), at most `limit` of them. A regular
    /// file (standard input redirected from one included) is refused from its size before a byte is read;
    /// a pipe, or a file that grows while read, as soon as it passes the limit, so memory stays bounded.
    public static func readArchive(atPath path: String, limit: Int = maximumImportBytes) throws -> Data {
        let handle: FileHandle
        if path == "-" {
            handle = .standardInput
        } else {
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw ImportError(message: "Cannot read it: \((error as NSError).localizedDescription)")
            }
        }
        defer { if path != "-" { try? handle.close() } }
        var info = stat()
        let isRegularFile = fstat(handle.fileDescriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
        let knownSize = isRegularFile ? Int(info.st_size) : nil
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
            throw ImportError(message: "Cannot read it: \((error as NSError).localizedDescription)")
        }
        return data
    }

    /// "Too large: 1024 MiB (1073741824 bytes); an import reads at most 256 MiB."
    private static func tooLarge(size: Int?, limit: Int) -> ImportError {
        let shown = size.map { "\(mebibytes($0)) (\($0) bytes)" } ?? "over \(mebibytes(limit))"
        return ImportError(message: "Too large: \(shown); an import reads at most \(mebibytes(limit)).")
    }

    private static func mebibytes(_ bytes: Int) -> String {
        bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : String(format: "%.1f MiB", Double(bytes) / Double(1 << 20))
    }
}
