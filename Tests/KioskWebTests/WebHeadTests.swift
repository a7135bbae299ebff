import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import Testing
@testable import KioskWeb

@Suite("HEAD is answered like GET, without a body")
struct WebHeadTests {
    /// Where a HEAD is asked: a page, an API route, a static file, a debugger page, a 404 (the picture is its own test).
    static let addresses = ["/", "/rickandmorty", "/api/rickandmorty", "/api/favorites", StaticAssets.stylesheet.path,
                            "/debug", "/nowhere", "/api/nowhere"]

    @Test("HEAD answers every kind of address with GET's status and headers and no body", arguments: addresses)
    func headLikeGet(uri: String) async throws {
        try await withWeb { _, client in
            // Given the answer to a GET, once what it shows is stored (the first answer says "fetched now")
            _ = try await client.get(uri)
            let get = try await client.get(uri)
            // When the same address is asked with HEAD
            let head = try await client.head(uri)
            // Then it is the GET's answer without the body
            try expectSameHead(head, as: get, uri: uri)
        }
    }

    @Test("HEAD on a picture answers like GET without the bytes")
    func headOnPicture() async throws {
        try await withWeb { harness, client in
            // Given a picture a listed item shows
            let uri = try await harness.listedPictureURI()
            // (asked once first: the first answer's Cache-Status says it was fetched, the later ones a hit)
            _ = try await client.get(uri)
            let get = try await client.get(uri)
            // When it is asked with HEAD
            let head = try await client.head(uri)
            // Then the status, type and length are the GET's, with no bytes
            #expect(get.status == .ok)
            #expect(get.header("Content-Type") == "image/png")
            try expectSameHead(head, as: get, uri: uri)
        }
    }

    /// Same status, same headers (Set-Cookie carries a new random token each time, so only its presence
    /// is compared), a Content-Length that is the GET body's, and no body.
    private func expectSameHead(_ head: Fetched, as get: Fetched, uri: String) throws {
        #expect(head.status == get.status, "\(uri)")
        #expect(head.bytes.isEmpty, "\(uri) has a body")
        #expect(head.header("Content-Length") == String(get.bytes.count), "\(uri)")
        #expect(head.header("Content-Type") != nil, "\(uri)")
        let setCookie = HTTPFields.Element.Name.setCookie
        #expect((head.headers[setCookie] == nil) == (get.headers[setCookie] == nil), "\(uri)")
        var headFields = head.headers, getFields = get.headers
        headFields[setCookie] = nil
        getFields[setCookie] = nil
        #expect(headFields == getFields, "\(uri)")
    }
}
