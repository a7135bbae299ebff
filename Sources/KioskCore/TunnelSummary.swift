public import Foundation

/// What a CONNECT tunnel carried, reported once both of its connections have closed: the log keeps it as one
/// exchange (the host, the bytes each way, how long it was open), since the bytes themselves are not read.
public struct TunnelSummary: Sendable, Hashable {
    /// The CONNECT request's target.
    public var host: String
    public var port: Int
    /// Bytes from the app to the upstream, and back.
    public var sent: Int
    public var received: Int
    /// How long it was open, up to when it is reported (its start is dated by whoever logs it, on its clock).
    public var duration: TimeInterval
    /// Why the tunnel could not be opened (the upstream refused the connection...), or nil.
    public var error: String?

    public init(host: String, port: Int, sent: Int, received: Int, duration: TimeInterval, error: String?) {
        self.host = host
        self.port = port
        self.sent = sent
        self.received = received
        self.duration = duration
        self.error = error
    }
}
