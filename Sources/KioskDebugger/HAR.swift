public import Foundation
import NIOHTTP1
public import KioskCore

/// HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/) export of the request log, and
/// import of any tool's archive as mock rules (HARImport.swift). Records are redacted at capture, so an
/// archive never holds a secret. Kiosk's own facts ride in `_kiosk…` fields (the spec's extension
/// convention) and in `cache.comment`, which other tools ignore.
public enum HAR {
    /// The archive of `records` (oldest first in the file, as HAR viewers expect), pretty-printed JSON:
    /// one page holding every entry, every entry with a response (status 0 and `_error` for a failure),
    /// and each entry's `time` the sum of its measured `timings` phases, as the spec requires. Answers Kiosk gave
    /// from its store are left out (`ArchiveStream.leftOut`): no exchange was made.
    public static func export(_ records: [RequestRecord]) throws -> Data {
        let sorted = records.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
        var given = false
        let archive = ArchiveStream {
            defer { given = true }
            return given ? nil : sorted
        }
        return try archive.whole()
    }

    /// An archive made a batch of records at a time and handed on in parts, so that one of any size (a proxy cache of
    /// hundreds of megabytes) holds a batch in memory, not the whole: the same document `export` makes of the batches'
    /// records, which come oldest first.
    public final class ArchiveStream {
        private let batches: () throws -> [RequestRecord]?
        private let encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            // Keys sorted: the same records make the same bytes, export after export (a dictionary's order is not kept),
            // so archives can be diffed and kept under version control.
            encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes, .sortedKeys]
            return encoder
        }()
        private var ended = false
        /// The entries handed on so far.
        public private(set) var count = 0
        /// The records left out so far: those Kiosk answered from its store, which made no exchange to archive (HAR
        /// has no entry without a response but a failed one, which they are not).
        public private(set) var leftOut = 0

        /// An archive of the records `batches` gives, batch after batch, until it gives nil.
        public init(batches: @escaping () throws -> [RequestRecord]?) {
            self.batches = batches
        }

        /// The rest of the archive in one piece: for an archive known to be small.
        public func whole() throws -> Data {
            var data = Data()
            while let part = try next() { data.append(part) }
            return data
        }

        /// The archive's next bytes, or nil once it is whole.
        public func next() throws -> Data? {
            guard !ended else { return nil }
            var part = Data()
            while part.isEmpty {
                guard let batch = try batches() else {
                    // No page in an archive without entries: the page starts with its first request.
                    if count == 0 { part.append(try head(firstStart: nil)) }
                    // A text file ends with a line feed (POSIX): `export -` leaves the shell prompt on a line of its own.
                    part.append(contentsOf: "\n    ]\n  }\n}\n".utf8)
                    ended = true
                    return part
                }
                for record in batch {
                    guard record.statusClass != .store else {
                        leftOut += 1
                        continue
                    }
                    let entry = Entry(record)
                    part.append(count == 0 ? try head(firstStart: entry.startedDateTime) : Data(",\n".utf8))
                    part.append(Self.indented(try encoder.encode(entry), by: 6))
                    count += 1
                }
            }
            return part
        }

        /// The document up to its first entry: `{"log": {"version", "creator", "pages", "entries": [`, pretty-printed.
        private func head(firstStart: String?) throws -> Data {
            let creator = Creator(name: "Kiosk", version: KioskVersion.current)
            // Viewers group entries by page (some refuse an archive without `pages`); the log is one session, so one page,
            // starting with its first request.
            let pages = firstStart.map { [Page(startedDateTime: $0, id: Entry.pageID, title: "Kiosk request log", pageTimings: PageTimings())] } ?? []
            var head = Data("{\n  \"log\" : {\n    \"version\" : \"1.2\",\n    \"creator\" : ".utf8)
            head.append(Self.indented(try encoder.encode(creator), by: 4, firstLine: false))
            head.append(contentsOf: ",\n    \"pages\" : ".utf8)
            head.append(Self.indented(try encoder.encode(pages), by: 4, firstLine: false))
            head.append(contentsOf: ",\n    \"entries\" : [\n".utf8)
            return head
        }

        /// Pretty-printed JSON moved right by `spaces` for its place in the document, its first line too unless it
        /// follows a key on that line (`"creator" : {`).
        private static func indented(_ json: Data, by spaces: Int, firstLine: Bool = true) -> Data {
            let pad = [UInt8](repeating: UInt8(ascii: " "), count: spaces)
            var result = Data(capacity: json.count + json.count / 8)
            if firstLine { result.append(contentsOf: pad) }
            // A newline in JSON text is always the encoder's: inside strings it is escaped. Copied a line at a time.
            var start = json.startIndex
            while let newline = json[start...].firstIndex(of: UInt8(ascii: "\n")) {
                result.append(json[start...newline])
                result.append(contentsOf: pad)
                start = json.index(after: newline)
            }
            result.append(json[start...])
            return result
        }
    }

    /// A record as a `curl` command line (redacted: the secrets read `<redacted>`), quoted for a POSIX shell. The fields
    /// curl writes itself from the command, and those of the hop the record was made on, are left to it, as Chrome's
    /// "Copy as cURL" does: a `Content-Length` kept would frame a body edited (or redacted) to another length wrongly,
    /// and the proxy's own `Via` would make the command, sent through the proxy again, look like a loop. An origin
    /// `connectOverrides` reaches elsewhere (the embedded demo upstream's `demo.invalid`, which resolves nowhere) gets
    /// curl's `--connect-to` to that listener, as Kiosk itself connects to it.
    public static func curl(_ record: RequestRecord, connectOverrides: [Origin: Origin] = [:]) -> String {
        var parts = ["curl"]
        if record.method != "GET" { parts += ["-X", quote(record.method)] }
        parts.append(quote(record.url))
        if let origin = URL(string: record.url).flatMap(Origin.init), let listener = connectOverrides[origin] {
            let host = { (host: String) in host.contains(":") ? "[\(host)]" : host }
            parts += ["--connect-to", quote("\(host(origin.host)):\(origin.port):\(host(listener.host)):\(listener.port)")]
        }
        let leftToCurl: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "keep-alive", "via", "expect",
                                       "proxy-connection", "te", "upgrade"]
        for header in record.requestHeaders {
            let name = header.name.lowercased()
            guard !leftToCurl.contains(name) else { continue }
            // curl asks for (and decodes) a compressed answer itself with --compressed, as the app did.
            if name == "accept-encoding", ["gzip", "deflate", "br", "zstd"].contains(where: header.value.lowercased().contains) {
                if !parts.contains("--compressed") { parts.append("--compressed") }
                continue
            }
            parts += ["-H", quote("\(header.name): \(header.value)")]
        }
        // A body cut by the capture limit is sent as far as it was kept: said before the command, which a shell skips.
        let cut = record.requestBody.flatMap { body in
            body.isTruncated ? "# The body was cut by Kiosk's capture limit: this sends its first \(body.data.count) of \(body.originalSize) bytes.\n" : nil
        } ?? ""
        if let body = record.requestBody, let text = String(data: body.data, encoding: .utf8) {
            parts += ["--data-raw", quote(text)]
        } else if let body = record.requestBody, !body.data.isEmpty {
            // Not text (a protobuf, a file in a form): its bytes written by printf, whose format's octal escapes hold every
            // byte, NUL too (a shell's quoted word cannot), piped to curl.
            return cut + "printf " + quote(printfFormat(body.data)) + " | " + (parts + ["--data-binary", "@-"]).joined(separator: " ")
        }
        return cut + parts.joined(separator: " ")
    }

    /// A printf format writing `bytes` (POSIX): printable ASCII as itself (`%` and a backslash escaped), every other byte
    /// as its three-digit octal escape — and a first `-` (a multipart body's boundary), which printf would take for an option.
    static func printfFormat(_ bytes: Data) -> String {
        var text = ""
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "-") where offset == 0: text += "\\055"
            case UInt8(ascii: "%"): text += "%%"
            case UInt8(ascii: "\\"): text += "\\\\"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(byte))
            default: text += "\\" + String(format: "%03o", byte)
            }
        }
        return text
    }

    /// Single-quoted for a POSIX shell: nothing inside is interpreted, and a quote is closed, escaped, reopened.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    // MARK: - The document

    struct Page: Encodable {
        let startedDateTime, id, title: String
        let pageTimings: PageTimings
    }

    /// A page's load events: none for a log of API requests (-1, "not applicable", as the spec says).
    struct PageTimings: Encodable {
        let onContentLoad = -1.0
        let onLoad = -1.0
    }

    struct Creator: Encodable {
        let name, version: String
    }

    struct NameValue: Encodable {
        let name, value: String
    }

    struct Entry: Encodable {
        /// The export's one page.
        static let pageID = "kiosk"

        let pageref = Entry.pageID
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
        /// Kiosk's decision as its RFC 9211 Cache-Status value (CacheStatus.swift).
        let _kioskCacheStatus: String
        /// The mocks, rewrite rules and breakpoints that acted on the exchange; absent when none did.
        let _kioskTouchedBy: [ExchangeTouch]?

        init(_ record: RequestRecord) {
            startedDateTime = HAR.timestamp(record.startedAt)
            request = Request(record)
            response = Response(record)
            cache = Cache(comment: "Kiosk cache decision: \(record.decision.rawValue)")
            timings = Timings(record.timings)
            time = timings.sum
            _kioskId = record.id
            _kioskSource = record.source?.rawValue
            _kioskEndpoint = record.endpoint
            _kioskDecision = record.decision.rawValue
            _kioskError = record.error
            _kioskCacheStatus = record.cacheStatus.headerValue
            _kioskTouchedBy = record.touchedBy.isEmpty ? nil : record.touchedBy
        }
    }

    struct Request: Encodable {
        let method, url: String
        let httpVersion: String
        let cookies: [NameValue] = []
        let headers, queryString: [NameValue]
        let headersSize = -1
        let bodySize: Int
        let postData: PostData?

        init(_ record: RequestRecord) {
            method = record.method
            url = record.url
            httpVersion = HAR.httpVersion(record)
            headers = record.requestHeaders.map { NameValue(name: $0.name, value: $0.value) }
            queryString = URLComponents(string: record.url)?.queryItems?.map { NameValue(name: $0.name, value: $0.value ?? "") } ?? []
            bodySize = HAR.sentLength(record.requestHeaders) ?? record.requestBody?.originalSize ?? 0
            postData = record.requestBody.map { body in
                PostData(mimeType: record.requestHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? "",
                         text: String(decoding: body.data, as: UTF8.self),
                         // Cut at capture as an answer's body is, and said so the same way.
                         comment: body.isTruncated ? "truncated by Kiosk's capture limit to \(body.data.count) of \(body.originalSize) bytes" : nil,
                         _kioskTruncated: body.isTruncated ? true : nil)
            }
        }
    }

    /// The protocol of the exchange with the upstream as it was recorded (`HTTP/2.0` for an HTTP/2 upstream's), else
    /// `HTTP/1.1`: what Kiosk speaks to apps and to upstreams by default, and what records older than the field had.
    static func httpVersion(_ record: RequestRecord) -> String { record.httpVersion ?? "HTTP/1.1" }

    /// The length a message's `Content-Length` says was sent (HAR's `bodySize`: bytes on the wire, before redaction made
    /// the kept body longer or shorter); nil without one, or with one that is no length.
    static func sentLength(_ fields: [RequestRecord.HeaderField]) -> Int? {
        guard let value = fields.first(where: { $0.name.lowercased() == "content-length" })?.value,
              let length = Int(value.trimmingCharacters(in: .whitespaces)), length >= 0 else { return nil }
        return length
    }

    struct PostData: Encodable {
        let mimeType, text: String
        /// Present only for a body the capture cut.
        let comment: String?
        let _kioskTruncated: Bool?
    }

    struct Response: Encodable {
        let status: Int
        let statusText: String
        let httpVersion: String
        let cookies: [NameValue] = []
        let headers: [NameValue]
        let content: Content
        /// The Location field's value (HAR 1.2: "redirection target URL from the Location response header"), else "".
        let redirectURL: String
        let headersSize = -1
        let bodySize: Int
        /// Why there is no response, in Chrome's and mitmproxy's field; absent when there is one.
        let _error: String?
        let _kioskTruncated: Bool

        init(_ record: RequestRecord) {
            // HAR has no "no response": browsers write status 0 for a request that failed, and so does Kiosk.
            status = record.status ?? 0
            _error = record.status == nil ? (record.error ?? "No response") : nil
            statusText = record.status.map { HTTPStatusText.phrase($0) } ?? ""
            httpVersion = HAR.httpVersion(record)
            headers = record.responseHeaders.map { NameValue(name: $0.name, value: $0.value) }
            redirectURL = record.responseHeaders.first { $0.name.lowercased() == "location" }?.value ?? ""
            let mimeType = record.responseHeaders.first { $0.name.lowercased() == "content-type" }?.value ?? ""
            let coding = RequestRecord.HeaderField.combined("Content-Encoding", in: record.responseHeaders)
            content = Content(record.responseBody, mimeType: mimeType, contentEncoding: coding, contentType: mimeType)
            // No body follows a HEAD's answer, a 204, a 304 or a 1xx (RFC 9110 §6.4.1), whatever Content-Length says of a GET's.
            let bodiless = record.method.uppercased() == "HEAD" || record.status.map { $0 == 204 || $0 == 304 || (100..<200).contains($0) } ?? false
            bodySize = bodiless ? 0 : (HAR.sentLength(record.responseHeaders) ?? record.responseBody?.originalSize ?? -1)
            _kioskTruncated = record.responseBody?.isTruncated ?? false
        }
    }

    /// A response body as HAR 1.2 keeps it: decoded (`text` "is decoded (decompressed & unchunked)", `size` its decoded
    /// length, `compression` the bytes the coding saved), as a gzip or deflate body whole is; one Kiosk cannot decode
    /// (brotli without its library, a text body mislabelled) is kept as sent, base64, and its comment says so, as it says
    /// of one withheld at capture (`CapturedBody.isWithheld`: cut, corrupt, or brotli holding a secret).
    struct Content: Encodable {
        let size: Int
        let compression: Int?
        let mimeType: String
        let text, encoding, comment: String?

        init(_ body: CapturedBody?, mimeType: String, contentEncoding: String? = nil, contentType: String? = nil) {
            self.mimeType = mimeType
            guard var body else {
                size = 0
                compression = nil
                text = nil
                encoding = nil
                comment = nil
                return
            }
            var note: String?, saved: Int?
            if let coding = contentEncoding?.trimmingCharacters(in: .whitespaces).lowercased(), !coding.isEmpty, coding != "identity" {
                if body.isWithheld {
                    note = "not kept: coded as \(coding), and it could not be kept whole with its secrets hidden (cut by the capture "
                        + "limit, corrupt, or brotli holding a secret; \(body.originalSize) bytes as sent)"
                } else if body.isTruncated {
                    note = "coded as \(coding) and cut by Kiosk's capture limit, so kept as sent"
                } else if case let (decoded, from?) = body.decoded(contentEncoding: coding) {
                    // HAR's `compression` is the bytes saved: positive for a coding that shrank the body.
                    saved = decoded.originalSize - body.data.count
                    body = decoded
                    if decoded.isTruncated {
                        note = "decoded from \(from); the first \(decoded.data.count) of its \(decoded.originalSize) bytes exported"
                    }
                } else {
                    note = "kept as sent, coded as \(coding)" + (ContentCoding.decodes(coding) ? " (it does not decode)" : "")
                }
            }
            compression = saved
            size = body.originalSize
            let json = BodyJSON(body, contentType: contentType)
            text = json.text ?? json.base64
            encoding = json.text == nil ? "base64" : nil
            comment = note ?? (body.isTruncated ? "truncated by Kiosk's capture limit to \(body.data.count) of \(body.originalSize) bytes" : nil)
        }
    }

    struct Cache: Encodable {
        let comment: String
    }

    /// The phases of an exchange in milliseconds, -1 for a phase not measured (never counted in `sum`). HAR 1.2's
    /// `connect` leaves out `dns` and takes in `ssl` (which is given apart as well): Kiosk's `connect` holds all three.
    struct Timings: Encodable {
        let blocked: Double
        let dns: Double
        let connect: Double
        let ssl: Double
        let send = 0.0
        let wait, receive: Double

        init(_ timings: RequestTimings) {
            blocked = timings.queued.map(HAR.milliseconds) ?? -1
            dns = timings.connect == nil ? -1 : timings.dns.map(HAR.milliseconds) ?? -1
            connect = timings.connect.map { HAR.milliseconds(max(0, $0 - (timings.dns ?? 0))) } ?? -1
            ssl = timings.connect == nil ? -1 : timings.tls.map(HAR.milliseconds) ?? -1
            receive = HAR.milliseconds(timings.download ?? 0)
            // Without a measured time to first byte (a store answer), the rest of the time is waiting.
            let unmeasured = timings.total - (timings.queued ?? 0) - (timings.connect ?? 0) - (timings.download ?? 0)
            wait = HAR.milliseconds(timings.firstByte ?? max(0, unmeasured))
        }

        /// The entry's `time`: the phases that were measured, added up (HAR 1.2 defines `time` so; `ssl` is within
        /// `connect`), rounded to the microsecond so that the sum of the rounded phases is exact.
        var sum: Double {
            let measured = [blocked, dns, connect, send, wait, receive].filter { $0 >= 0 }
            return (measured.reduce(0, +) * 1000).rounded() / 1000
        }
    }

    static func milliseconds(_ seconds: TimeInterval) -> Double { (seconds * 1_000_000).rounded() / 1000 }

    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// The reason phrases HAR's `statusText` wants, for the statuses upstreams send.
enum HTTPStatusText {
    /// The reason phrase of a registered status (RFC 9110 and the IANA registry, as NIO knows them: `203 Non-Authoritative
    /// Information`, `418 I'm a teapot`), as Chrome and mitmproxy write a HAR's `statusText`; empty for another.
    static func phrase(_ status: Int) -> String {
        guard (100...999).contains(status) else { return "" }
        return HTTPResponseStatus(statusCode: status).reasonPhrase
    }
}
