public import Foundation
public import KioskCore

// The debugger's JSON shapes, shared by `kiosk log --json`, the console's JSON and HAR bodies.

/// One logged exchange: `kiosk log --json`, `kiosk log show --json` and the debugger's JSON. Bodies are
/// text when they are UTF-8 (JSON, HTML), else base64; the list leaves them out.
public struct RequestJSON: Encodable, Sendable {
    public let id: Int64
    public let startedAt: Date
    public let source: SourceID?
    public let endpoint: String
    public let method: String
    public let url: String
    public let status: Int?
    public let error: String?
    public let decision: CacheDecision
    /// The decision as Kiosk's RFC 9211 Cache-Status value (`Kiosk;hit;ttl=42;detail=fresh`).
    public let cacheStatus: String
    public let durationMs: Double
    public let timings: RequestTimings
    /// The headers; absent from the live feed's rows, which carry what the list shows.
    public let requestHeaders: [RequestRecord.HeaderField]?
    public let responseHeaders: [RequestRecord.HeaderField]?
    public let requestBody: BodyJSON?
    public let responseBody: BodyJSON?
    /// The mocks, rewrite rules and breakpoints that acted on the exchange (or matched and did not apply).
    public let touchedBy: [ExchangeTouch]

    /// The JSON of `record`; without `includingHeaders`, its headers are left out (a live feed's row).
    public init(_ record: RequestRecord, includingHeaders: Bool = true) {
        id = record.id
        startedAt = record.startedAt
        source = record.source
        endpoint = record.endpoint
        method = record.method
        url = record.url
        status = record.status
        error = record.error
        decision = record.decision
        cacheStatus = record.cacheStatus.headerValue
        durationMs = (record.timings.total * 1_000_000).rounded() / 1000
        timings = record.timings
        requestHeaders = includingHeaders ? record.requestHeaders : nil
        responseHeaders = includingHeaders ? record.responseHeaders : nil
        let type = { (fields: [RequestRecord.HeaderField]) in fields.first { HTTPHeaderFields.sameName($0.name, "Content-Type") }?.value }
        requestBody = record.requestBody.map { BodyJSON($0, contentType: type(record.requestHeaders)) }
        responseBody = record.responseBody.map { BodyJSON($0, contentType: type(record.responseHeaders)) }
        touchedBy = record.touchedBy
    }
}

/// A captured body in JSON: `text` when it is UTF-8 (or in the one-byte charset its Content-Type names), else `base64`.
public struct BodyJSON: Encodable, Sendable {
    public let text: String?
    public let base64: String?
    public let size: Int
    public let truncated: Bool

    /// `body` as text when it is UTF-8, or in the other charset its `contentType` names (ISO-8859-1 read as Windows-1252,
    /// Shift_JIS, GBK, as an older server answers `text/plain; charset=iso-8859-1`: `HAR.encodings(ofCharset:)`) when
    /// that text gives its bytes back; else in base64.
    public init(_ body: CapturedBody, contentType: String? = nil) {
        // A cut made by the capture limit can split a multi-byte character: drop up to 3 bytes to read it. Validated by the
        // standard library, which keeps a leading BOM as U+FEFF where Foundation's UTF-8 decoding drops it: the text is
        // the body's every byte, and an archive imported again answers with them.
        let text = (0...(body.isTruncated ? 3 : 0)).lazy.compactMap { String(validating: body.data.dropLast($0), as: UTF8.self) }.first
            ?? HAR.decoded(body.data, charset: HAR.charset(of: contentType))
        self.text = text
        base64 = text == nil ? body.data.base64EncodedString() : nil
        size = body.originalSize
        truncated = body.isTruncated
    }
}
