import Foundation
import KioskApp
import KioskCore
import KioskNetwork
import KioskSources
import KioskTestSupport
import Testing

/// Request forgery, tried as an attacker would: through the image route, through planted picture URLs
/// and through redirects, against real listeners on loopback that count every request they get.
@Suite("Outbound policy over real listeners", .serialized)
struct OutboundPolicyIntegrationTests {
    private func refusalReason(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let KioskError.refused(_, reason) {
            return reason
        } catch {
            return "not refused: \(error)"
        }
    }

    @Test("a picture on another port of the demo upstream's host is not served, and that service gets no request")
    func otherPortRefused() async throws {
        let trap = try await TrapServer.start()
        try await withHarness { h in
            // Given the demo upstream on 127.0.0.1 and another local service (Kiosk itself, say) on another port
            // When pictures on that other port are asked for
            for path in ["/x.png", "/debug", "/debug/api/requests"] {
                await #expect(throws: KioskError.self) {
                    _ = try await h.kiosk.images.image(for: URL(string: trap.origin + path)!)
                }
            }
            // Then nothing reached it
            #expect(trap.requests.isEmpty)
        }
        await trap.stop()
    }

    @Test("pictures planted in upstream data on loopback, link-local or private addresses are refused in every form and logged with the reason")
    func plantedPicturesRefused() async throws {
        let trap = try await TrapServer.start()
        try await withHarness { h in
            // Given stored items whose pictures point at a local service in every spelling
            let port = trap.port
            let planted = ["http://127.0.0.1:\(port)/a.png", "http://2130706433:\(port)/b.png", "http://0x7f000001:\(port)/c.png",
                           "http://0177.0.0.1:\(port)/d.png", "http://127.1:\(port)/e.png", "http://localhost:\(port)/f.png",
                           "http://[::ffff:127.0.0.1]:\(port)/g.png", "http://[::1]:\(port)/h.png", "http://0.0.0.0:\(port)/i.png",
                           "http://169.254.169.254/latest/meta-data/iam", "http://[fe80::1]/j.png", "http://10.0.0.1/k.png"]
            try h.database.saveItems(planted.enumerated().map { index, url in
                CatalogItem(source: .dogs, itemID: "planted-\(index)", title: "Planted", subtitle: "", summary: "",
                            imageURL: URL(string: url)!, detail: .dog(.init(name: "Planted", description: "", age: 1, image: URL(string: url)!)))
            })

            // When each is fetched through the image pipeline
            for url in planted {
                let reason = await refusalReason { _ = try await h.kiosk.images.image(for: URL(string: url)!) }
                // Then it is refused by the outbound policy, saying why
                #expect(reason != nil && reason?.hasPrefix("not refused") == false, "\(url): \(reason ?? "fetched")")
            }
            // And the local service never heard of it
            #expect(trap.requests.isEmpty)
            // And every refusal is in the request log with its reason
            let log = try #require(h.kiosk.requestLog)
            try log.flush()
            let refusals = try log.records(matching: RequestFilter(text: nil)).filter { $0.error?.hasPrefix("Refused") == true }
            #expect(refusals.count == planted.count)
            #expect(refusals.contains { $0.error?.contains("a link-local address") == true })
        }
        await trap.stop()
    }

    /// A Kiosk whose dogs source is `dogsURL` (on a trap server), over the real HTTP transport.
    private func kiosk(dogsURL: String) throws -> Kiosk {
        var sources = SourceConfiguration.live
        sources.dogsURL = URL(string: dogsURL)!
        let folder = TemporaryDirectory.url("kiosk-policy")
        var configuration = KioskConfiguration(dataDirectory: folder, sources: sources)
        configuration.transport = TransportConfiguration(connectTimeout: .seconds(2), requestTimeout: .seconds(3))
        configuration.retry = .none
        return try Kiosk(configuration: configuration)
    }

    @Test("a redirect from a source's origin to another origin is refused for catalogs and pictures; one within the origin is followed")
    func redirectsRechecked() async throws {
        let source = try await TrapServer.start()
        let target = try await TrapServer.start()
        let kiosk = try kiosk(dogsURL: source.origin + "/redirect?to=" + "\(target.origin)/dogs.json")

        // When the catalog redirects to another local port
        let catalogReason = await refusalReason { _ = try await kiosk.catalog.page(PageRequest(source: .dogs)) }
        // Then the redirect is refused and the other port gets nothing
        #expect(catalogReason?.contains("not the origin of a configured source") == true)

        // When pictures on the source's origin redirect to link-local, IPv6 loopback, or another port
        for to in ["http://169.254.169.254/latest/meta-data", "http://[::1]:\(target.port)/x.png", "\(target.origin)/x.png"] {
            let encoded = to.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let reason = await refusalReason { _ = try await kiosk.images.image(for: URL(string: "\(source.origin)/redirect?to=\(encoded)")!) }
            #expect(reason != nil && reason?.hasPrefix("not refused") == false, "\(to): \(reason ?? "fetched")")
        }
        #expect(target.requests.isEmpty)

        // When a picture redirects within the origin, it is followed
        let image = try await kiosk.images.image(for: URL(string: "\(source.origin)/redirect?to=%2Fpic.png")!)
        #expect(image.data == Data(TrapServer.png))

        // And more than five redirects are refused
        var chain = "/pic.png"
        for _ in 0..<6 { chain = "/redirect?to=" + chain.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let loop = await refusalReason { _ = try await kiosk.images.image(for: URL(string: source.origin + chain)!) }
        #expect(loop?.contains("more than 5 redirects") == true)

        await kiosk.shutdown()
        await source.stop()
        await target.stop()
    }
}
