import Foundation
package import Hummingbird
import KioskApp
import KioskCore

// The JSON API answers in the CLI's `--json` shapes, defined once in KioskApp (JSONShapes.swift).

/// JSON responses with the CLI's encoder settings.
package enum JSONResponse {
    package static func ok(_ value: some Encodable) throws -> Response {
        make(.ok, try KioskJSON.encoder().encode(value))
    }

    /// A 400 whose body says more than `{"error"}` (where a bad filter's mistake is).
    package static func badRequest(_ value: some Encodable) throws -> Response {
        make(.badRequest, try KioskJSON.encoder().encode(value))
    }

    /// A JSON document already encoded.
    static func ok(encoded data: Data) -> Response {
        make(.ok, data)
    }

    /// `{"error": "..."}` with the error's status.
    static func error(_ error: WebError) -> Response {
        let body = (try? JSONEncoder().encode(["error": error.message])) ?? Data("{\"error\":\"error\"}".utf8)
        return make(error.status, body)
    }

    private static func make(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                 body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
