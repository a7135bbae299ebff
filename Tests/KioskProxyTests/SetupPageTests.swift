import Foundation
import KioskCore
import KioskProxy
import SwiftASN1
import Testing
import X509

@Suite("http://kiosk.proxy/: the CA and the steps to trust it, answered by the proxy itself")
struct SetupPageTests {
    @Test("The page, the PEM, the DER and the iOS profile are served by the proxy, never asked of any upstream or logged")
    func setupPage() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            let authority = try ProxyAuthority.inDirectory(proxy.harness.directory)
            // Given an app whose proxy is Kiosk, opening the setup address (a name no resolver knows)
            let page = try await proxy.send(.GET, "http://kiosk.proxy/")
            // Then the page names the proxy's address, links the three downloads, and gives steps per platform
            #expect(page.status == .ok)
            #expect(page.header("Content-Type").first == "text/html; charset=utf-8")
            #expect(page.header("Content-Security-Policy").first?.contains("default-src 'none'") == true)
            for text in ["127.0.0.1:\(proxy.port)", "href=\"/ca.pem\"", "href=\"/ca.crt\"", "href=\"/ca.mobileconfig\"",
                         "iPhone and iPad", "Certificate Trust Settings", "Android", "Firefox", "Chrome", "curl", authority.fingerprint] {
                #expect(page.text.contains(text), "the page lacks \(text)")
            }
            // And markup in its text is escaped (the Android step quotes XML)
            #expect(page.text.contains("&lt;debug-overrides&gt;"))
            // And the PEM is the CA's certificate, the DER parses to the same certificate, and neither holds a key
            let pem = try await proxy.send(.GET, "http://kiosk.proxy/ca.pem")
            #expect(pem.text == authority.certificatePEM)
            // (The name's absolute form, with its final dot, is the same name: answered here, never resolved.)
            #expect(try await proxy.send(.GET, "http://KIOSK.proxy./ca.pem").text == authority.certificatePEM)
            let der = try await proxy.send(.GET, "http://kiosk.proxy/ca.crt")
            #expect(der.body == authority.certificateDER)
            #expect(der.header("Content-Disposition").first?.contains("kiosk-proxy-ca.crt") == true)
            let certificate = try Certificate(derEncoded: Array(der.body))
            #expect(try certificate.extensions.basicConstraints == .isCertificateAuthority(maxPathLength: 0))
            for answer in [page, pem, der] { #expect(!answer.text.contains("PRIVATE KEY")) }
            // And the profile is a property list with one root payload carrying the DER, the same on every download
            let profile = try await proxy.send(.GET, "http://kiosk.proxy/ca.mobileconfig")
            #expect(profile.header("Content-Type").first == "application/x-apple-aspen-config")
            let plist = try #require(try PropertyListSerialization.propertyList(from: profile.body, format: nil) as? [String: Any])
            #expect(plist["PayloadType"] as? String == "Configuration")
            let payload = try #require((plist["PayloadContent"] as? [[String: Any]])?.first)
            #expect(payload["PayloadType"] as? String == "com.apple.security.root")
            #expect(payload["PayloadContent"] as? Data == authority.certificateDER)
            #expect(try await proxy.send(.GET, "http://kiosk.proxy/ca.mobileconfig").body == profile.body)
            // And an unknown path is a 404 pointing at the page, a POST a 405
            #expect(try await proxy.send(.GET, "http://kiosk.proxy/ca.key").status == .notFound)
            #expect(try await proxy.send(.POST, "http://kiosk.proxy/", body: "x").status == .methodNotAllowed)
            // And no upstream was asked and nothing was logged
            #expect(upstream.requests == 0)
            #expect(try proxy.records().allSatisfy { !$0.url.contains("kiosk.proxy") })
        }
    }

    @Test("A phone whose first language is Spanish gets the page in Spanish, its 404 too; its steps are the console's")
    func spanishSetupPage() async throws {
        try await withProxy(intercepting: true) { proxy, _ in
            let page = try await proxy.send(.GET, "http://kiosk.proxy/", headers: [("Accept-Language", "es-MX,es;q=0.9,en;q=0.5")])
            #expect(page.header("Content-Language") == ["es"] && page.text.contains("lang=\"es\""))
            #expect(page.text.contains("Confiar en el proxy de Kiosk") && page.text.contains("Ajustes de confianza de certificados"))
            #expect(!page.text.contains("Settings › Wi-Fi") && !page.text.contains("Certificate (PEM)"))
            // And an English one (or none) gets English
            let english = try await proxy.send(.GET, "http://kiosk.proxy/", headers: [("Accept-Language", "en-GB,es;q=0.5")])
            #expect(english.text.contains("Settings › Wi-Fi") && english.header("Content-Language") == ["en"])
            // And an address that has nothing says so in the phone's language
            let nothing = try await proxy.send(.GET, "http://kiosk.proxy/nope", headers: [("Accept-Language", "es")])
            #expect(nothing.status == .notFound && nothing.text.hasPrefix("Aquí no hay nada") && nothing.header("Content-Language") == ["es"])
        }
    }

    @Test("The listeners count connections, requests, read and unread CONNECTs and refusals as they happen")
    func meterCounts() async throws {
        try await withProxy(intercepting: true) { proxy, upstream in
            let meter = proxy.meter
            // When an app makes two requests inside one CONNECT that Kiosk reads, and another app a request it refuses
            let authority = try #require(proxy.authorityFile)
            let (status, _) = try await runCurl(["-s", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                 upstream.secureURL("/echo"), upstream.secureURL("/echo?again")])
            #expect(status == 0)
            _ = try await rawExchange(port: proxy.port, "GET /relative HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            // Then the meter counts them, and no connection stays counted open once all closed
            var counts = meter.snapshot
            for _ in 0..<200 where counts.openConnections > 0 {
                try await Task.sleep(for: .milliseconds(10))
                counts = meter.snapshot
            }
            #expect(counts.openConnections == 0)
            #expect(counts.requests == 2 && counts.refused == 1 && counts.intercepted == 1 && counts.tunnels == 0, "\(counts)")
            #expect(counts.connections == 2)
        }
    }

    @Test("Over HTTPS through an intercepted CONNECT the setup page answers too (curl trusting Kiosk's CA)")
    func setupPageOverHTTPS() async throws {
        try await withProxy(intercepting: true) { proxy, _ in
            let authority = try #require(proxy.authorityFile)
            let (status, output) = try await runCurl(["-s", "-x", "http://127.0.0.1:\(proxy.port)", "--cacert", authority,
                                                      "https://kiosk.proxy/ca.pem"])
            #expect(status == 0)
            #expect(String(decoding: output, as: UTF8.self).hasPrefix("-----BEGIN CERTIFICATE-----"))
        }
    }
}
