import Foundation
import KioskCore
import KioskStore

/// HTTP Archive 1.2 (http://www.softwareishard.com/blog/har-12-spec/) export of the request log. Records
/// are redacted at capture, so an archive never holds a secret. Kiosk's own facts ride in `_kiosk…`
/// fields (the spec's extension convention) and in `cache.comment`, which other tools ignore.
public enum HAR {
    /// The archive of `records` (oldest first in the file, as HAR viewers expect), pretty-printed JSON.
    public static func export(_ records: [RequestRecord]) throws -> Data {
        let entries = records.sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }.map(Entry.init)
        let document = Document(log: Log(version: "1.2", creator: Creator(name: "Kiosk", version: "1.0"), entries: entries))
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
        let name: String
        let version: String
    }

    struct NameValue: Encodable {
        let name: String
        let value: String
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
        let _kioskEndpoint: String
        let _kioskDecision: String
        let _kioskError: String?

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
        }
    }

    struct Request: Encodable {
        let method: String
        let url: String
        let httpVersion = "HTTP/1.1"
        let cookies: [NameValue] = []
        let headers: [NameValue]
        let queryString: [NameValue]
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
        let mimeType: String
        let text: String
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
        let text: String?
        let encoding: String?
        let comment: String?

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
        let wait: Double
        let receive: Double

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

extension RequestLog {
    /// The records matching `filter` in full (with their bodies), newest first, at most `maximum`:
    /// what an export needs. Reads the log a page at a time, so the filter's own limit does not apply.
    public func fullRecords(matching filter: RequestFilter, maximum: Int = 100_000) throws -> [RequestRecord] {
        var result: [RequestRecord] = []
        var page = filter
        page.limit = 500
        while result.count < maximum {
            let batch = try records(matching: page)
            for summary in batch where result.count < maximum {
                if let full = try record(id: summary.id) { result.append(full) }
            }
            guard batch.count == page.limit, let last = batch.last else { break }
            page.beforeID = last.id
        }
        return result
    }
}
