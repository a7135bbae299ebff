import Foundation
import Hummingbird

/// `/api/openapi.json`: the JSON API described in OpenAPI 3.1. It is a file (Resources/openapi.json), not
/// generated, so it can be read and reviewed as it is served; `OpenAPIDocumentTests` keeps it true to the
/// routes and the answers.
enum OpenAPIDocument {
    /// The document's bytes, read once. Nil only when the resource bundle was not installed beside the binary.
    static let data: Data? = Bundle.module.url(forResource: "openapi", withExtension: "json").flatMap { try? Data(contentsOf: $0) }

    /// The document as an `application/json` answer.
    static func response() throws -> Response {
        guard let data else {
            throw WebError(status: .internalServerError, title: "Internal error",
                           message: "The OpenAPI document is missing from Kiosk's installation.", retryPath: nil)
        }
        return JSONResponse.ok(encoded: data)
    }
}
