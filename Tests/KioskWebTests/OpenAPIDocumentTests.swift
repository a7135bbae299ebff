import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import Testing
@testable import KioskWeb

@Suite("The OpenAPI document stays true to the JSON API")
struct OpenAPIDocumentTests {
    @Test("The OpenAPI 3.1 document is served at /api/openapi.json as JSON")
    func served() async throws {
        try await withWeb { _, client in
            // Given the running app
            // When the document is asked for
            let answer = try await client.get("/api/openapi.json")
            // Then it is an OpenAPI 3.1 document in JSON
            #expect(answer.status == .ok)
            #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
            #expect(try answer.json()["openapi"] as? String == "3.1.0")
        }
    }

    @Test("Every /api route the router registers is a documented operation")
    func everyRouteDocumented() async throws {
        try await withWeb { harness, _ in
            // Given the routes the web app registers under /api
            let routes = buildRouter(kiosk: harness.kiosk).router.routes.filter { $0.path.description.hasPrefix("/api/") }
            #expect(routes.count >= 5)
            // When each is looked up in the document
            let paths = try #require(try Self.document()["paths"] as? [String: Any])
            // Then it is there with its method
            for route in routes {
                let operations = paths[route.path.description] as? [String: Any]
                #expect(operations?[route.method.rawValue.lowercased()] != nil, "\(route) is not in openapi.json")
            }
        }
    }

    @Test("Every operation lists the 421 every listener gives a request for a name it is not served under, as plain text")
    func everyOperationListsTheListenersRefusal() throws {
        let paths = try #require(try Self.document()["paths"] as? [String: [String: Any]])
        for (path, operations) in paths {
            for (method, operation) in operations {
                let responses = (operation as? [String: Any])?["responses"] as? [String: Any]
                let refusal = responses?["421"] as? [String: Any]
                #expect((refusal?["content"] as? [String: Any])?["text/plain"] != nil, "\(method) \(path) does not list the 421")
            }
        }
        // (The refusal itself, status and text, is the listener guard's: WebListenerGuardTests.)
    }

    /// Answers of every documented operation, errors included, from a real demo upstream.
    static let samples: [(path: String, uri: String, status: Int)] = [
        ("/api/{source}", "/api/rickandmorty?page=2", 200),
        ("/api/{source}", "/api/rickandmorty?q=morty", 200),
        ("/api/{source}", "/api/dogs?q=re", 200),
        ("/api/{source}", "/api/nyt", 200),
        ("/api/{source}", "/api/nyt?kind=shared&period=30", 200),
        ("/api/{source}", "/api/marvel", 200),
        ("/api/{source}", "/api/dogs", 200),
        ("/api/{source}", "/api/rickandmorty?page=0", 400),
        ("/api/{source}", "/api/nyt?status=alive", 400),
        ("/api/{source}", "/api/nowhere", 404),
        ("/api/{source}", "/api/rickandmorty?page=999", 404),
        ("/api/{source}/{id}", "/api/rickandmorty/1", 200),
        ("/api/{source}/{id}", "/api/marvel/1011334", 200),
        ("/api/{source}/{id}", "/api/dogs/rex", 200),
        ("/api/{source}/{id}", "/api/rickandmorty/episode-1", 200),
        ("/api/{source}/{id}", "/api/rickandmorty/location-3?page=2", 200),
        ("/api/{source}/{id}", "/api/rickandmorty/abc", 400),
        ("/api/{source}/{id}", "/api/rickandmorty/1?page=0", 400),
        ("/api/{source}/{id}", "/api/rickandmorty/999999", 404),
        ("/api/favorites", "/api/favorites", 200),
        ("/api/connectivity", "/api/connectivity", 200),
        ("/api/openapi.json", "/api/openapi.json", 200),
    ]

    @Test("Sample answers of each /api route have the documented status and the shape of its schema")
    func samplesConform() async throws {
        try await withWeb { harness, client in
            let document = try Self.document()
            // Given a favorite, so the favorites list has an item to check
            _ = try await client.get("/api/rickandmorty")
            try harness.kiosk.catalog.setFavorite(true, source: .rickandmorty, itemID: "1")
            for sample in Self.samples {
                // When each sample is asked for
                let answer = try await client.get(sample.uri)
                // Then its status is documented for the operation and its body has the schema's shape
                #expect(answer.status.code == sample.status, "\(sample.uri)")
                let schema = try Self.responseSchema(document, path: sample.path, status: answer.status.code)
                #expect(schema != nil, "\(sample.uri): status \(answer.status.code) is not documented")
                guard let schema else { continue }
                #expect(answer.header("Content-Type")?.hasPrefix("application/json") == true, "\(sample.uri)")
                let body = try JSONSerialization.jsonObject(with: Data(answer.bytes), options: [.fragmentsAllowed])
                let problems = SchemaShape(document: document).problems(body, schema, at: "$")
                #expect(problems.isEmpty, "\(sample.uri): \(problems.prefix(5))")
                // And its headers are those documented: each required one present and matching its pattern,
                // and a Cache-Status only where the document says there is one
                let headers = try Self.responseHeaders(document, path: sample.path, status: answer.status.code)
                for (name, header) in headers {
                    let value = answer.header(name)
                    if header["required"] as? Bool == true { #expect(value != nil, "\(sample.uri): no \(name)") }
                    if let value, let pattern = (header["schema"] as? [String: Any])?["pattern"] as? String {
                        #expect(value.range(of: pattern, options: .regularExpression) != nil, "\(sample.uri): \(name): \(value)")
                    }
                }
                #expect((answer.header("Cache-Status") != nil) == (headers["Cache-Status"] != nil), "\(sample.uri)")
            }
            // And while the upstream is unreachable, a page nothing was stored for is a documented 503
            try await harness.setOffline(true)
            let offline = try await client.get("/api/marvel/1009610")
            #expect(offline.status == .serviceUnavailable)
            let schema = try #require(try Self.responseSchema(document, path: "/api/{source}/{id}", status: 503))
            let body = try JSONSerialization.jsonObject(with: Data(offline.bytes))
            #expect(SchemaShape(document: document).problems(body, schema, at: "$").isEmpty)
        }
    }

    @Test("The structural check finds a missing required property, a wrong type and an undeclared key")
    func checkerCatchesProblems() throws {
        // Given the document's schema of an error body
        let document = try Self.document()
        let schema: [String: Any] = ["$ref": "#/components/schemas/Error"]
        let shape = SchemaShape(document: document)
        // When bodies that break it are checked
        // Then each is caught, and a conforming one passes
        #expect(!shape.problems([String: Any](), schema, at: "$").isEmpty)
        #expect(!shape.problems(["error": 3], schema, at: "$").isEmpty)
        #expect(!shape.problems(["error": "x", "extra": 1], schema, at: "$").isEmpty)
        #expect(shape.problems(["error": "x"], schema, at: "$").isEmpty)
    }

    static func document() throws -> [String: Any] {
        let data = try #require(OpenAPIDocument.data)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The headers a GET's documented response lists, by name, with `$ref`s to `components/headers` resolved.
    static func responseHeaders(_ document: [String: Any], path: String, status: Int) throws -> [String: [String: Any]] {
        let paths = try #require(document["paths"] as? [String: Any])
        let operation = try #require((paths[path] as? [String: Any])?["get"] as? [String: Any], "\(path)")
        let response = (operation["responses"] as? [String: Any])?[String(status)] as? [String: Any]
        let components = (document["components"] as? [String: Any])?["headers"] as? [String: Any] ?? [:]
        var headers: [String: [String: Any]] = [:]
        for case let (name, header as [String: Any]) in response?["headers"] as? [String: Any] ?? [:] {
            if let reference = header["$ref"] as? String {
                let key = try #require(reference.split(separator: "/").last.map(String.init))
                headers[name] = try #require(components[key] as? [String: Any], "\(reference)")
            } else {
                headers[name] = header
            }
        }
        return headers
    }

    /// The JSON schema of a GET's documented response, or nil when that status is not documented.
    static func responseSchema(_ document: [String: Any], path: String, status: Int) throws -> [String: Any]? {
        let paths = try #require(document["paths"] as? [String: Any])
        let operation = try #require((paths[path] as? [String: Any])?["get"] as? [String: Any], "\(path)")
        let responses = try #require(operation["responses"] as? [String: Any])
        guard let response = responses[String(status)] as? [String: Any] else { return nil }
        let content = try #require(response["content"] as? [String: Any])
        return try #require((content["application/json"] as? [String: Any])?["schema"] as? [String: Any])
    }
}

/// A small structural check of JSON against the document's schemas: `$ref`, `type`, `required`,
/// `properties`, `additionalProperties: false`, `items`, `enum`, `const` and `oneOf` (exactly one).
/// Enough to keep the document honest about shapes; schemathesis validates fully in scripts/api-fuzz.sh.
struct SchemaShape {
    let document: [String: Any]

    func problems(_ value: Any, _ schema: [String: Any], at path: String) -> [String] {
        if let ref = schema["$ref"] as? String {
            let name = String(ref.dropFirst("#/components/schemas/".count))
            guard let target = ((document["components"] as? [String: Any])?["schemas"] as? [String: Any])?[name] as? [String: Any] else {
                return ["\(path): unresolved \(ref)"]
            }
            return problems(value, target, at: path)
        }
        if let choices = schema["oneOf"] as? [[String: Any]] {
            let matching = choices.filter { problems(value, $0, at: path).isEmpty }.count
            return matching == 1 ? [] : ["\(path): matches \(matching) of oneOf's \(choices.count) schemas"]
        }
        if let constant = schema["const"] as? String, value as? String != constant {
            return ["\(path): is not \(constant)"]
        }
        if let allowed = schema["enum"] as? [String], let text = value as? String, !allowed.contains(text) {
            return ["\(path): \(text) is not one of \(allowed)"]
        }
        let types = (schema["type"] as? [String]) ?? (schema["type"] as? String).map { [$0] } ?? []
        if !types.isEmpty, !types.contains(where: { Self.value(value, is: $0) }) {
            return ["\(path): is not \(types.joined(separator: " or "))"]
        }
        var found: [String] = []
        if let object = value as? [String: Any], !(value is NSNull) {
            let properties = schema["properties"] as? [String: [String: Any]] ?? [:]
            for key in schema["required"] as? [String] ?? [] where object[key] == nil {
                found.append("\(path).\(key): required but missing")
            }
            for (key, item) in object {
                if let property = properties[key] {
                    found += problems(item, property, at: "\(path).\(key)")
                } else if let additional = schema["additionalProperties"] as? [String: Any] {
                    found += problems(item, additional, at: "\(path).\(key)")
                } else if schema["additionalProperties"] as? Bool == false {
                    found.append("\(path).\(key): not declared")
                }
            }
        }
        if let array = value as? [Any], let items = schema["items"] as? [String: Any] {
            for (index, item) in array.enumerated() { found += problems(item, items, at: "\(path)[\(index)]") }
        }
        return found
    }

    private static func value(_ value: Any, is type: String) -> Bool {
        switch type {
        case "null": return value is NSNull
        case "object": return value is [String: Any]
        case "array": return value is [Any]
        case "string": return value is String
        case "boolean": return value is Bool
        // Foundation reads every JSON number as NSNumber; a whole one is an integer.
        case "integer": return (value as? NSNumber).map { $0.doubleValue == $0.doubleValue.rounded() } ?? false
        default: return true
        }
    }
}
