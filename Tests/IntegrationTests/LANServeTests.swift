import Foundation
import KioskTestSupport
import Testing

@Suite("kiosk serve --lan and kiosk devices", .serialized)
struct LANServeTests {
    @Test("serve --lan prints its URLs, the certificate's fingerprint and a pairing code; the next start reuses the certificate with a new code")
    func lanStartAndRestart() throws {
        // Given an empty data folder
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // When serve --lan starts, stops, and starts again
        let first = try ServeProcess(dataDirectory: cli.dataDirectory, arguments: ["--lan"], readyLine: "Pairing code: ")
        first.stop()
        let second = try ServeProcess(dataDirectory: cli.dataDirectory, arguments: ["--lan"], readyLine: "Pairing code: ")
        second.stop()
        // Then the first made the certificate and said so, and the second used it again and said so
        #expect(first.output.contains("Made a self-signed certificate for this machine"))
        #expect(second.output.contains("Using the self-signed certificate"))
        // And each printed an HTTPS address, the same fingerprint (colon hex) and its own 8-digit code
        func value(_ prefix: String, in output: String) -> String? {
            output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count).prefix { $0 != " " }) }
        }
        #expect(first.output.contains("Kiosk on https://localhost:\(first.port)/"))
        let fingerprint = try #require(value("Certificate SHA-256 fingerprint: ", in: first.output))
        #expect(fingerprint.range(of: #"^([0-9A-F]{2}:){31}[0-9A-F]{2}$"#, options: .regularExpression) != nil)
        #expect(value("Certificate SHA-256 fingerprint: ", in: second.output) == fingerprint)
        let codes = [value("Pairing code: ", in: first.output), value("Pairing code: ", in: second.output)].compactMap { $0 }
        #expect(codes.count == 2 && codes.allSatisfy { $0.range(of: #"^\d{4}-\d{4}$"#, options: .regularExpression) != nil })
        #expect(codes[0] != codes[1])
        // And the key is its owner's only
        let key = cli.dataDirectory.appendingPathComponent("lan-key.pem").path
        #expect(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int == 0o600)
    }

    @Test("serve refuses --lan with --allow-plain-http, and --tls-cert without --tls-key, saying why", arguments: [
        (["--lan", "--allow-plain-http"], "--allow-plain-http cannot be combined with HTTPS"),
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--lan", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], "cannot read the certificate file"),
    ])
    func refusals(arguments: [String], reason: String) throws {
        // Given serve asked for a combination that cannot work
        let cli = CLI()
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // When it starts
        let result = try cli.run(["serve", "--port", "0"] + arguments)
        // Then it stops at once with bad-input status and one line saying why
        #expect(result.status == 2)
        #expect(result.stderr.contains(reason), "\(result.stderr)")
        #expect(!result.stdout.contains("Kiosk on"))
    }

    @Test("devices list says there are none; revoking an unknown id is a clear error with bad-input status")
    func devicesCommands() throws {
        let cli = CLI()
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // Given a data folder where nothing paired
        // When devices are listed, as text and JSON, and an unknown one is revoked
        let list = try cli.run(["devices", "list"])
        let json = try cli.run(["devices", "list", "--json"])
        let revoke = try cli.run(["devices", "revoke", "7"])
        // Then the list says how a browser pairs, the JSON is an empty array, and the revoke names the id
        #expect(list.status == 0 && list.stdout.contains("No paired devices"))
        #expect(json.status == 0)
        #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.isEmpty == true)
        #expect(revoke.status == 2)
        #expect(revoke.stderr.hasPrefix("error: ") && revoke.stderr.contains("no paired device 7"))
    }
}
