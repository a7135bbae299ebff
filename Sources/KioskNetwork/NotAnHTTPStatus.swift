/// An upstream's answer whose status is outside 100–599 (`HTTP/1.1 099 …`, `:status: 000`, `600`): refused as no HTTP status
/// (RFC 9110 §15). NIO's parser reads such an answer as a final one, with a body; passed on, it would reach the app as an
/// answer no HTTP client can read (AsyncHTTPClient, a client apps use, trapped on one below 100).
struct NotAnHTTPStatus: Error, Equatable {
    /// The status the upstream sent.
    let code: UInt

    /// The status as it appeared on the wire: three digits.
    var shown: String { String(repeating: "0", count: max(0, 3 - String(code).count)) + String(code) }
}
