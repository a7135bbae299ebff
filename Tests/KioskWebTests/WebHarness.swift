import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskCore
import KioskDemoUpstream
@testable import KioskConsole
@testable import KioskWeb

extension Harness {
    /// The `/image` address of the picture the first Rick and Morty character shows (its page is fetched).
    func listedPictureURI() async throws -> String {
        let update = try await kiosk.catalog.page(PageRequest(source: .rickandmorty))
        let imageURL = try #require(update.page.items.first?.imageURL)
        return "/image?url=" + QueryString.encode(imageURL.absoluteString)
    }
}

/// Runs a test body with the web app on a free loopback port, started as `kiosk serve` starts it (with
/// `configuration`), a test client of it, and an HTTP client that streams and sets any header (Host included).
func withLiveWeb(_ configuration: WebConfiguration = WebConfiguration(host: "127.0.0.1", port: 0),
                 _ body: @Sendable (Harness, any TestClientProtocol, HTTPClient, Int) async throws -> Void) async throws {
    try await withHarness { harness in
        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let app = try buildApplication(kiosk: harness.kiosk, configuration: configuration, features: { [Console($0)] })
            try await app.test(.live) { client in try await body(harness, client, http, try #require(client.port)) }
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
    }
}

/// The web app's router over `kiosk` with the console, as `kiosk serve` builds it; the console open to whom
/// `debugAccess` lets in (by default the owner on a loopback listener).
func buildRouter(kiosk: Kiosk, csrf: CSRFProtection = CSRFProtection(),
                 debugAccess: DebugAccess = DebugAccess(token: nil, isLoopback: true), pairing: PairingGate? = nil) -> WebRouter {
    KioskWeb.buildRouter(kiosk: kiosk, features: [Console(kiosk: kiosk, access: debugAccess)], csrf: csrf, pairing: pairing)
}

/// Runs a test body with the router under HummingbirdTesting's `.router` framework, always stopping the harness.
/// `configure` changes Kiosk's configuration first (a proxy cache, say).
func withWeb(faults: FaultSettings = .none, configure: (inout KioskConfiguration) -> Void = { _ in },
             _ body: @Sendable (Harness, any TestClientProtocol) async throws -> Void) async throws {
    let harness = try await Harness.start(faults: faults, configure: configure)
    do {
        let app = Application(router: buildRouter(kiosk: harness.kiosk))
        try await app.test(.router) { client in try await body(harness, client) }
    } catch {
        await harness.stop()
        throw error
    }
    await harness.stop()
}

/// A GET answered as status, headers and body text.
struct Fetched: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: String
    let bytes: [UInt8]

    func header(_ name: String) -> String? { headers[HTTPFields.Element.Name(name)!] }

    /// The body as a JSON object.
    func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }
}

import Testing
import KioskTestSupport

extension TestClientProtocol {
    func get(_ uri: String, headers: HTTPFields = [:]) async throws -> Fetched {
        try await fetch(uri, method: .get, headers: headers)
    }

    func head(_ uri: String, headers: HTTPFields = [:]) async throws -> Fetched {
        try await fetch(uri, method: .head, headers: headers)
    }

    private func fetch(_ uri: String, method: HTTPRequest.Method, headers: HTTPFields) async throws -> Fetched {
        try await execute(uri: uri, method: method, headers: headers) { response in
            Fetched(status: response.status, headers: response.headers, body: String(buffer: response.body),
                    bytes: Array(response.body.readableBytesView))
        }
    }
}

extension TestClientProtocol {
    /// A form POST (`application/x-www-form-urlencoded`), as a browser sends it with JavaScript off.
    func post(_ uri: String, form: [(String, String)], cookie: String? = nil, origin: String? = nil,
              headers extra: HTTPFields = [:]) async throws -> Fetched {
        var headers: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        headers.append(contentsOf: extra)
        if let cookie { headers[.cookie] = "\(CSRFProtection.cookieName)=\(cookie)" }
        if let origin { headers[.origin] = origin }
        let body = form.map { QueryString.encode($0.0) + "=" + QueryString.encode($0.1) }.joined(separator: "&")
        return try await execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body)) { response in
            Fetched(status: response.status, headers: response.headers, body: String(buffer: response.body),
                    bytes: Array(response.body.readableBytesView))
        }
    }
}

/// The token a page handed out in its Set-Cookie headers (Home sets its visit's cookie too).
func issuedToken(_ page: Fetched) throws -> String {
    let prefix = "\(CSRFProtection.cookieName)="
    let header = try #require(page.headers[values: .setCookie].first { $0.hasPrefix(prefix) })
    return String(header.dropFirst(prefix.count).prefix { $0 != ";" })
}
