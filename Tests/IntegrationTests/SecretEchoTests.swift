import Foundation
import KioskApp
import KioskDebugger
import KioskCore
import KioskDemoUpstream
import KioskSources
import KioskStore
import KioskTestSupport
import Testing

/// An upstream that echoes credentials back — in ETags, names, error messages and headers — must leave
/// no key and no signature (`ts` + `hash` + public key is a replayable credential) anywhere Kiosk writes
/// or shows, while revalidation still works.
@Suite("Secrets echoed by a hostile upstream", .serialized)
struct SecretEchoTests {
    /// The `ts` and `hash` Marvel requests carry at the harness's current time.
    private func signature(_ h: Harness) throws -> [String] {
        let request = try h.catalog.source(.marvel).listRequest(for: PageRequest(source: .marvel))
        let items = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return ["ts", "hash"].compactMap { name in items.first { $0.name == name }?.value }
    }

    /// Whether `text` holds `secret`. A secret of digits only (Marvel's `ts`, "1800000000") counts as a whole number:
    /// the same digits inside another number (a duration's "0.18000000000000002") are not it.
    static func holds(_ text: String, _ secret: String) -> Bool {
        guard secret.allSatisfy(\.isASCII), secret.allSatisfy(\.isNumber) else { return text.contains(secret) }
        var start = text.startIndex
        while let found = text.range(of: secret, range: start..<text.endIndex) {
            let before = found.lowerBound == text.startIndex ? nil : text[text.index(before: found.lowerBound)]
            let after = found.upperBound == text.endIndex ? nil : text[found.upperBound]
            if !(before.map { $0.isNumber || $0 == "." } ?? false), !(after?.isNumber ?? false) { return true }
            start = found.upperBound
        }
        return false
    }

    @Test("no key, ts or hash echoed by the upstream reaches the store's files, the log, HAR, cURL, items or errors; revalidation still gets its 304")
    func echoedSecretsScrubbed() async throws {
        try await withHarness(faults: FaultSettings(echoCredentials: true)) { h in
            let keys = await h.demo.keys
            var secrets = [keys.nyt, keys.marvelPublic, keys.marvelPrivate] + (try signature(h))
            var shown: [String] = []
            func show(_ update: CatalogUpdate) throws {
                shown.append(String(decoding: try JSONEncoder().encode(update.page.items), as: UTF8.self))
                shown.append(update.error?.description ?? "")
            }

            // Given pages read from an upstream that echoes every credential
            let marvel = try await h.catalog.page(PageRequest(source: .marvel))
            try show(marvel)
            #expect(marvel.page.items.first?.title.contains(Redactor.placeholder) == true)
            try show(try await h.catalog.page(PageRequest(source: .nyt)))
            let id = try #require(marvel.page.items.first?.itemID)
            shown.append(try await h.catalog.item(source: .marvel, itemID: id, policy: .force).item.title)

            // When the pages go stale and are revalidated with their (echoing) ETags
            await h.now.advance(by: .seconds(2 * 86400))
            secrets += try signature(h)
            let revalidated = try await h.catalog.page(PageRequest(source: .marvel))
            try show(revalidated)
            // Then the ETag was re-sent exactly as received: a 304, not a full answer
            #expect(revalidated.origin == .notModified)

            // When a Kiosk with a wrong private key is told off with its own credentials in the message
            var configuration = h.kiosk.configuration
            configuration.sources.marvelPrivateKey = "wrong-private-key-0123456789"
            configuration.databaseName = "second.sqlite"
            let second = try Kiosk(configuration: configuration, dependencies: .init(now: h.now.dateSource))
            secrets += ["wrong-private-key-0123456789"] + (try signature(h))
            do {
                _ = try await second.catalog.page(PageRequest(source: .marvel, page: 3))
                Issue.record("a wrong hash was accepted")
            } catch let error as KioskError {
                shown.append(error.description)
                #expect(error.description.contains(Redactor.placeholder))
            }
            await second.shutdown()

            // Then nothing Kiosk shows or writes holds any of them
            let log = try #require(h.kiosk.requestLog)
            try log.flush()
            let records = try log.fullRecords(matching: RequestFilter())
            #expect(records.contains { $0.responseHeaders.contains { $0.name.lowercased() == "x-echo" } })
            shown.append(String(decoding: try JSONEncoder().encode(records), as: UTF8.self))
            shown.append(String(decoding: try HAR.export(records), as: UTF8.self))
            shown += records.map { HAR.curl($0) }
            var files = Data()
            let folder = h.directory
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
                files += (try? Data(contentsOf: folder.appendingPathComponent(name))) ?? Data()
            }
            #expect(!files.isEmpty)
            let fileText = String(decoding: files, as: UTF8.self)
            for secret in Set(secrets) where secret.count >= 6 {
                #expect(!shown.contains { Self.holds($0, secret) }, "\(secret) is shown")
                #expect(!Self.holds(fileText, secret), "\(secret) is in a file")
            }
        }
    }
}
