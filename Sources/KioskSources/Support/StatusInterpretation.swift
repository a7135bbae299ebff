import Foundation
import KioskCore

/// Turns upstream statuses into `KioskError`s. Sources handle their own special answers first
/// (Marvel 409, Rick and Morty's "nothing here" 404) and hand everything else to `check`.
enum UpstreamStatus {
    /// Returns for 2xx; otherwise throws: 401 unauthorized, 404 notFound, 429 rateLimited, anything else httpStatus.
    /// URLs in the errors are redacted, because errors end up in logs, pages and exported files.
    static func check(_ response: HTTPResponse, source: SourceID, now: Date) throws {
        guard !response.isSuccess else { return }
        let url = response.url.redactedString
        switch response.status {
        case 401:
            throw KioskError.unauthorized(
                source,
                message: message(in: response.body) ?? "\(source.displayName) rejected the credentials (HTTP 401)"
            )
        case 404:
            throw KioskError.notFound(url)
        case 429:
            throw KioskError.rateLimited(
                url: url,
                retryAfterSeconds: retryAfterSeconds(response.headers["Retry-After"], now: now)
            )
        default:
            throw KioskError.httpStatus(response.status, url: url)
        }
    }

    /// The human-readable message of an error body, from any of the four APIs' shapes:
    /// Marvel `{"code","message"}` or `{"code","status"}`, NYT `{"fault":{"faultstring"}}`,
    /// Rick and Morty `{"error"}`. Never the raw body: an HTML error page must not leak into a message.
    static func message(in body: Data) -> String? {
        guard let document = OrderedJSON.parseIfValid(body), case .object = document else { return nil }
        var candidates: [OrderedJSON?] = [document["message"], document["error"]]
        if let fault = document["fault"], case .object = fault { candidates.append(fault["faultstring"]) }
        candidates.append(document["status"])
        if case .array(let errors)? = document["errors"] { candidates.append(errors.first) }
        for case .string(let text)? in candidates {
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return trimmed.count <= 200 ? trimmed : String(trimmed.prefix(200)) + "…" }
        }
        return nil
    }

    /// `Retry-After` as seconds from `now`: delta-seconds or an HTTP-date (RFC 9110 §10.2.3); nil when absent or unreadable.
    static func retryAfterSeconds(_ value: String?, now: Date) -> Int? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int(value) { return max(0, seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(0, Int(date.timeIntervalSince(now).rounded(.up)))
    }
}
