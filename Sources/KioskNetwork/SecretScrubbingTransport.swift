import Foundation
public import KioskCore
import Synchronization

/// Removes secrets an upstream sends back — the configured keys and the request's own signature values
/// (Marvel's `ts` and `hash`), echoed in a header, a body or an error — from every answer before anything
/// above it (the store, the log, pages, errors) can see them. It sits just above the wire, so there is
/// one place where an answer is cleaned and everything else is clean by construction.
///
/// A validator (ETag, Last-Modified) that carried a secret is handed up scrubbed, and its original is
/// kept in memory only: when the scrubbed value comes back down in `If-None-Match` or
/// `If-Modified-Since`, the original is sent, so revalidation still gets its 304. After a restart the
/// original is gone and the conditional header is dropped (a full answer instead of a 304).
public final class SecretScrubbingTransport: HTTPTransport {
    private let base: any HTTPTransport
    private let redactor: Redactor
    /// `header name + "\n" + scrubbed value` → the value as the upstream sent it; bounded.
    private let originals = Mutex<[String: String]>([:])
    private static let vaultLimit = 4096
    private static let validators = [("ETag", "If-None-Match"), ("Last-Modified", "If-Modified-Since")]

    /// Wraps `base`, scrubbing with `redactor` (the configured keys) plus each request's own secrets.
    public init(base: any HTTPTransport, redactor: Redactor) {
        self.base = base
        self.redactor = redactor
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var outgoing = request
        for (_, conditional) in Self.validators {
            guard let value = request.headers[conditional], value.contains(Redactor.placeholder) else { continue }
            outgoing.headers[conditional] = originals.withLock { $0[conditional + "\n" + value] }
        }
        let scrubber = request.secrets.isEmpty ? redactor : redactor.hiding(request.secrets)
        var response: HTTPResponse
        do {
            response = try await base.send(outgoing)
        } catch let error as KioskError {
            throw error.mapText(scrubber.scrub)
        }
        var headers = HTTPHeaderFields()
        for field in response.headers {
            let scrubbed = scrubber.scrub(field.value)
            if scrubbed != field.value,
               let conditional = Self.validators.first(where: { HTTPHeaderFields.sameName($0.0, field.name) })?.1 {
                originals.withLock { vault in
                    if vault.count >= Self.vaultLimit { vault.removeAll(keepingCapacity: true) }
                    vault[conditional + "\n" + scrubbed] = field.value
                }
            }
            headers.add(name: field.name, value: scrubbed)
        }
        response.headers = headers
        response.body = scrubber.scrub(response.body)
        response.isScrubbed = true
        return response
    }
}
