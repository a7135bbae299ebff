public import Foundation

/// Every failure Kiosk reports, each saying what happened in words a user can act on.
/// URLs inside errors are always redacted.
public enum KioskError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError {
    /// The upstream could not be reached at all: `reason` says how (its name does not resolve, it refused the
    /// connection, or no route or answer).
    case offline(host: String, reason: OfflineReason = .unreachable)
    /// No complete answer arrived in time.
    case timeout(url: String, seconds: Double)
    /// Some other transport failure (TLS, reset connection...).
    case transport(url: String, message: String)
    /// The upstream answered, but with a body Kiosk will not read: `problem` says why (too large, a decompression bomb, a
    /// content coding that does not decode). Retrying gets the same answer.
    case unreadableAnswer(url: String, problem: AnswerProblem)
    /// The upstream answered with an error status.
    case httpStatus(Int, url: String)
    /// The upstream asked us to slow down.
    case rateLimited(url: String, retryAfterSeconds: Int?)
    /// Keys are missing or wrong for a source.
    case unauthorized(SourceID, message: String)
    /// The body is not what the API promises; `path` points at the problem.
    case malformedResponse(path: String, message: String)
    /// The body ended before Content-Length said it would.
    case truncatedBody(url: String, expected: Int, received: Int)
    /// The upstream sent the answer's head and `received` bytes of its body (of `expected`, 0 when not said), and not the
    /// rest within `seconds`.
    case stalledBody(url: String, seconds: Double, expected: Int, received: Int)
    /// An item or page that does not exist.
    case notFound(String)
    /// The caller asked for something invalid (page 0, unknown filter...).
    case invalidRequest(String)
    /// The local database failed (disk full, corrupt file...).
    case storage(String)
    /// The work was cancelled.
    case cancelled
    /// Kiosk's outbound policy would not send the request (a host that is not a configured source's
    /// origin, a private address, a redirect elsewhere); `reason` says which rule refused it.
    case refused(url: String, reason: String)

    public var description: String {
        switch self {
        case .offline(let host, .unreachable): "Offline: cannot connect to \(host)"
        case .offline(let host, .unresolved): "Cannot connect to \(host): the name does not resolve (DNS)"
        case .offline(let host, .noAnswer): "Cannot connect to \(host): it did not answer the connection in time (it is down, or a firewall drops it)"
        case .offline(let host, .noHandshake):
            "Cannot connect to \(host): it took the connection but did not answer its TLS handshake in time (no TLS server on that port, or one that hangs)"
        case .offline(let host, .refused): "Cannot connect to \(host): it refused the connection (nothing listens on that port)"
        case .timeout(let url, let seconds): "Timed out after \(Self.format(seconds)) s waiting for \(url)"
        case .transport(let url, let message): "Network error for \(url): \(message)"
        case .unreadableAnswer(let url, let problem): "Refused the answer from \(url): \(problem)"
        // A 304 reaches here only when nothing stored was named for it to confirm (a confirmed copy is no error).
        case .httpStatus(304, let url): "HTTP 304 Not Modified from \(url), though no stored copy was named for it to confirm"
        case .httpStatus(let status, let url): "HTTP \(status) from \(url)"
        case .rateLimited(let url, let retry):
            if let retry { "Rate limited by \(url); retry after \(Self.wait(retry))" } else { "Rate limited by \(url)" }
        case .unauthorized(let source, let message): "Not authorized by \(source.displayName): \(message)"
        case .malformedResponse(let path, let message): "Malformed response at \(path): \(message)"
        case .truncatedBody(let url, let expected, let received):
            // Of a body whose length was not said (chunked), how much came.
            expected > 0 ? "Truncated response from \(url): received \(received) of \(expected) bytes"
                : "Truncated response from \(url): the connection closed after \(received) bytes, before the end of the body"
        case .stalledBody(let url, let seconds, let expected, let received):
            "Timed out after \(Self.format(seconds)) s: \(url) sent its answer's head and \(received)"
                + (expected > 0 ? " of \(expected)" : "") + " bytes of its body, not the rest in time"
        case .notFound(let what): "Not found: \(what)"
        case .invalidRequest(let message): message
        case .storage(let message): "Storage error: \(message)"
        case .cancelled: "Cancelled"
        case .refused(let url, let reason): "Refused to fetch \(url): \(reason)"
        }
    }

    /// The same error with every text it carries passed through `transform` (to scrub secrets from
    /// what an upstream said before anyone can show it).
    public func mapText(_ transform: (String) -> String) -> KioskError {
        switch self {
        case .offline(let host, let reason): .offline(host: transform(host), reason: reason)
        case .timeout(let url, let seconds): .timeout(url: transform(url), seconds: seconds)
        case .transport(let url, let message): .transport(url: transform(url), message: transform(message))
        case .unreadableAnswer(let url, let problem): .unreadableAnswer(url: transform(url), problem: problem)
        case .httpStatus(let status, let url): .httpStatus(status, url: transform(url))
        case .rateLimited(let url, let retry): .rateLimited(url: transform(url), retryAfterSeconds: retry)
        case .unauthorized(let source, let message): .unauthorized(source, message: transform(message))
        case .malformedResponse(let path, let message): .malformedResponse(path: transform(path), message: transform(message))
        case .truncatedBody(let url, let expected, let received):
            .truncatedBody(url: transform(url), expected: expected, received: received)
        case .stalledBody(let url, let seconds, let expected, let received):
            .stalledBody(url: transform(url), seconds: seconds, expected: expected, received: received)
        case .notFound(let what): .notFound(transform(what))
        case .invalidRequest(let message): .invalidRequest(transform(message))
        case .storage(let message): .storage(transform(message))
        case .cancelled: .cancelled
        case .refused(let url, let reason): .refused(url: transform(url), reason: transform(reason))
        }
    }

    public var errorDescription: String? { description }

    /// How an upstream could not be reached.
    public enum OfflineReason: String, Sendable, Hashable {
        /// No route to it: the network is down.
        case unreachable
        /// No answer to the connection in time: the host is down, or a firewall drops the connection.
        case noAnswer
        /// The connection was taken, and its TLS handshake not answered in time (no TLS server there, or a hung one).
        case noHandshake
        /// Its name does not resolve (DNS).
        case unresolved
        /// It refused the connection: the host is up, nothing listens on the port.
        case refused
    }

    /// Why an upstream's answer was not read.
    public enum AnswerProblem: Sendable, Hashable, CustomStringConvertible {
        /// Its body is larger than the limit, in bytes.
        case larger(than: Int)
        /// Its content coding (gzip, deflate) expands past the decoder's ratio, as a decompression bomb does.
        case expandsTooMuch(ratio: Int)
        /// Its content coding does not decode.
        case corruptCoding

        public var description: String {
            switch self {
            case .larger(let limit): "it is larger than \(Self.size(limit)), more than Kiosk reads"
            case .expandsTooMuch(let ratio):
                "its content coding (its Content-Encoding) expands to more than \(ratio) times its size, as a decompression bomb does"
            case .corruptCoding: "its content coding (its Content-Encoding) is corrupt: it cannot be decoded"
            }
        }

        /// A limit as its setting is written: "32 MB" for a whole number of MB, else bytes.
        public static func size(_ bytes: Int) -> String {
            bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MB" : "\(bytes) bytes"
        }
    }

    /// Whether the failure means the upstream is unreachable (drives the offline banner).
    public var isConnectivityFailure: Bool {
        if case .offline = self { return true }
        return false
    }

    /// Whether a GET that failed this way is worth retrying.
    public var isRetryable: Bool {
        switch self {
        case .timeout, .stalledBody, .transport, .rateLimited, .truncatedBody: true
        case .httpStatus(let status, _): status >= 500
        default: false
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(format: "%.1f", seconds)
    }

    /// A wait as a person says it: "30 s", "5 min", "3 h", "2 days" (an upstream's Retry-After of a date in 2099 is
    /// no "2300019121 s").
    static func wait(_ seconds: Int) -> String {
        switch seconds {
        case ..<120: "\(seconds) s"
        case ..<7200: "\((seconds + 59) / 60) min"
        case ..<172_800: "\((seconds + 3599) / 3600) h"
        default: "\((seconds + 86_399) / 86_400) days"
        }
    }
}

extension KioskError {
    /// How a storage error caused by a full disk starts (the store's words for SQLITE_FULL and ENOSPC).
    public static let diskFullPrefix = "the disk is full"

    /// Whether this is a storage error caused by a full disk: what is fetched can still be shown, unstored.
    public var isDiskFull: Bool {
        if case .storage(let message) = self { return message.hasPrefix(Self.diskFullPrefix) }
        return false
    }
}

extension KioskError {
    /// Why a file operation failed, in the system's words (`No space left on device`, `Permission denied`), never
    /// Foundation's "The operation could not be completed" or its error domains and codes.
    public static func fileReason(_ error: any Error, path: String? = nil) -> String {
        // What Foundation words vaguely ("error 512"), the path often tells: a file where a folder must be, a folder
        // where a file must be.
        if let path {
            var ancestor = URL(fileURLWithPath: path)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue,
               (error as NSError).domain == NSCocoaErrorDomain, (error as NSError).code == CocoaError.Code.fileReadUnknown.rawValue {
                return "it is a folder, not a file"
            }
            while ancestor.path != "/" {
                ancestor.deleteLastPathComponent()
                if FileManager.default.fileExists(atPath: ancestor.path, isDirectory: &isFolder) {
                    if !isFolder.boolValue { return "\(ancestor.path) is a file, not a folder" }
                    break
                }
            }
        }
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        guard error.domain == NSCocoaErrorDomain else { return error.localizedDescription }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileWriteFileExists: return "a file is in the way where a folder is needed"
        case .fileNoSuchFile, .fileReadNoSuchFile: return String(cString: strerror(ENOENT))
        case .fileWriteOutOfSpace: return String(cString: strerror(ENOSPC))
        case .fileWriteVolumeReadOnly: return String(cString: strerror(EROFS))
        case .fileReadNoPermission, .fileWriteNoPermission: return String(cString: strerror(EACCES))
        case .fileReadCorruptFile: return "it is not in the expected format"
        // Foundation's "the file name is invalid" of a name the file system refuses for its length (ENAMETOOLONG).
        case .fileWriteInvalidFileName, .fileReadInvalidFileName:
            let tooLong = path.map { $0.utf8.count >= PATH_MAX || $0.split(separator: "/").contains { $0.utf8.count > NAME_MAX } } ?? false
            return tooLong ? "a name in it is longer than the file system allows (\(NAME_MAX) bytes a name, \(PATH_MAX) a path)"
                : error.localizedDescription
        default: return error.localizedDescription
        }
    }
}
