import Foundation
import Hummingbird
import KioskCore
import KioskListener

/// The control listener's routes. It runs on its own port so tests and the CLI can switch the API
/// "offline" (closing its socket) and back while still talking to the server.
///
/// - `GET /health`: `{"status":"ok","apiListening":Bool,"baseURL":String}`
/// - `GET /faults`: the current `FaultSettings`
/// - `PUT /faults` (or `POST`): a JSON object with any subset of the `FaultSettings` fields; present
///   fields replace the current values, absent ones are kept, `"sources": null` means all sources.
///   Answers the new settings. Malformed JSON, unknown fields or out-of-range values: 400 `{"error": ...}`.
/// - `DELETE /faults`: back to no faults; answers the new settings.
/// - `GET /stats`: `{"total":Int,"byPath":{path:Int},"byRequest":{"path?query":Int}}`
/// - `DELETE /stats`: resets the counts.
///
/// A change asked by a web page (any `Origin` but the control listener's own) is refused with 403: the port is on
/// loopback, where any page the user opens can post to it (a form's `text/plain` needs no preflight), and its
/// faults would take the demo reader offline or have it echo credentials.
enum ControlRouter {
    static func build(upstream: DemoUpstream) -> Router<PeerRequestContext> {
        let router = Router(context: PeerRequestContext.self)
        router.get("/health") { _, _ -> Response in
            let state = upstream.core.state
            return json(.ok, OrderedJSON.object([
                ("status", .string("ok")),
                ("apiListening", .bool(state.apiListening)),
                ("baseURL", .string(state.baseURL.absoluteString)),
            ]).compactBytes)
        }
        router.get("/faults") { _, _ -> Response in
            try faultsResponse(upstream.core.state.faults)
        }
        let update: @Sendable (Request, PeerRequestContext) async throws -> Response = { request, _ in
            if let refusal = crossSite(request) { return refusal }
            let body = try await request.body.collect(upTo: 64 * 1024)
            let data = Data(body.readableBytesView)
            let patch: FaultPatch
            do {
                patch = try JSONDecoder().decode(FaultPatch.self, from: data)
            } catch let error as DecodingError {
                return problem(.badRequest, "Invalid fault settings: \(error.readableDescription())")
            }
            let updated: FaultSettings
            do {
                updated = try await upstream.updateFaults { patch.applied(to: $0) }
            } catch let error as KioskError {
                return problem(.badRequest, "Invalid fault settings: \(error.description)")
            } catch {
                return problem(.internalServerError, "Could not apply the fault settings: \(error)")
            }
            return try faultsResponse(updated)
        }
        router.put("/faults", use: update)
        router.post("/faults", use: update)
        router.delete("/faults") { request, _ -> Response in
            if let refusal = crossSite(request) { return refusal }
            do {
                try await upstream.setFaults(.none)
            } catch {
                return problem(.internalServerError, "Could not reset the fault settings: \(error)")
            }
            return try faultsResponse(upstream.core.state.faults)
        }
        router.get("/stats") { _, _ -> Response in
            let (byRequest, byPath) = upstream.core.state.statistics()
            func counts(_ values: [String: Int]) -> OrderedJSON {
                .object(values.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
            }
            return json(.ok, OrderedJSON.object([
                ("total", .int(byRequest.values.reduce(0, +))),
                ("byPath", counts(byPath)),
                ("byRequest", counts(byRequest)),
            ]).compactBytes)
        }
        router.delete("/stats") { request, _ -> Response in
            if let refusal = crossSite(request) { return refusal }
            upstream.core.state.resetRequestCounts()
            return json(.ok, OrderedJSON.object([("total", .int(0))]).compactBytes)
        }
        return router
    }

    /// A 403 for a request a web page of another origin sent (its `Origin` is not `http://` and the listener's own
    /// `Host`); nil for one without `Origin` (the CLI, tests, curl) or from the listener's own origin.
    static func crossSite(_ request: Request) -> Response? {
        guard let origin = request.headers[.origin] else { return nil }
        if let host = request.head.authority, origin.lowercased() == "http://" + host.lowercased() { return nil }
        return problem(.forbidden, "A web page (\(origin)) may not change the demo upstream's faults or counts.")
    }

    private static func faultsResponse(_ faults: FaultSettings) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return json(.ok, Array(try encoder.encode(faults)))
    }

    private static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        json(status, OrderedJSON.object([("error", .string(message))]).compactBytes)
    }

    private static func json(_ status: HTTPResponse.Status, _ bytes: [UInt8]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = Reply.jsonType
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
