import Foundation
import KioskTestSupport
import Testing

@Suite("kiosk serve --lan and kiosk devices", .serialized)
struct LANServeTests {
    @Test("serve --lan prints its URLs, the certificate's fingerprint and, off a terminal, how to get a pairing code; the next start reuses the certificate; devices pair shows a new code each time")
    func lanStartAndRestart() async throws {
        // Given an empty data folder
        let cli = CLI()
        try FileManager.default.createDirectory(at: cli.dataDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // When serve --lan starts (its output is a pipe, as under a service manager), stops, and starts again
        let first = try await ServeProcess(dataDirectory: cli.dataDirectory, arguments: ["--lan"], readyLine: "Pairing: ")
        first.stop()
        let second = try await ServeProcess(dataDirectory: cli.dataDirectory, arguments: ["--lan"], readyLine: "Pairing: ")
        // And a code is asked for twice while the second runs
        let codeRuns = [try await cli.run(["devices", "pair"]), try await cli.run(["devices", "pair", "--json"])]
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
        // And serve wrote no code (logs keep what it writes) but the command that shows one, for this data folder
        #expect(!first.output.contains("Pairing code: "))
        #expect(first.output.contains("Pairing: run `kiosk devices pair --data-dir \(cli.dataDirectory.path)` for a code"))
        // And devices pair printed a code valid for 10 minutes, and the JSON one another
        #expect(codeRuns.allSatisfy { $0.status == 0 })
        let text = try #require(value("Pairing code: ", in: codeRuns[0].stdout))
        #expect(codeRuns[0].stdout.contains("within 10 minutes"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(codeRuns[1].stdout.utf8)) as? [String: Any])
        let codes = [text, try #require(json["code"] as? String)]
        #expect(codes.allSatisfy { $0.range(of: #"^\d{4}-\d{4}$"#, options: .regularExpression) != nil })
        #expect(codes[0] != codes[1])
        #expect(json["expiresAt"] is String)
        // And the key is its owner's only
        let key = cli.dataDirectory.appendingPathComponent("lan-key.pem").path
        #expect(try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int == 0o600)
    }

    @Test("serve refuses --lan with --allow-plain-http or a loopback --host, and --tls-cert without --tls-key, saying why", arguments: [
        (["--lan", "--allow-plain-http"], "--allow-plain-http cannot be combined with HTTPS"),
        (["--lan", "--host", "127.0.0.1"], "--host 127.0.0.1 (this machine only) does not reach"),
        (["--lan", "--host", "::1"], "does not reach"),
        (["--tls-cert", "cert.pem"], "--tls-cert and --tls-key go together"),
        (["--lan", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"], "cannot read the certificate file"),
    ])
    func refusals(arguments: [String], reason: String) async throws {
        // Given serve asked for a combination that cannot work
        let cli = CLI()
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // When it starts
        let result = try await cli.run(["serve", "--port", "0"] + arguments)
        // Then it stops at once with bad-input status and one line saying why
        #expect(result.status == 2)
        #expect(result.stderr.contains(reason), "\(result.stderr)")
        #expect(!result.stdout.contains("Kiosk on"))
    }

    @Test("serve refuses a short debug token and an allowed host that is not a name, saying why, before listening", arguments: [
        (["--port", "0"], ["KIOSK_DEBUG_TOKEN": "guessable"], "needs at least 24"),
        (["--port", "0", "--allowed-host", "kiosk example"], [:], "--allowed-host kiosk example is not a host name"),
        (["--port", "0", "--allowed-host", "192.168.1.4"], [:], "addresses are always answered"),
        (["--port", "0", "--allowed-host", ".com"], [:], "--allowed-host .com would answer every name under com"),
    ])
    func configurationRefusals(arguments: [String], environment: [String: String], reason: String) async throws {
        let cli = CLI()
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        let result = try await cli.run(["serve"] + arguments, environment: environment)
        #expect(result.status == 2)
        #expect(result.stderr.contains(reason), "\(result.stderr)")
        #expect(!result.stdout.contains("Kiosk on"))
    }

    @Test("devices list says there are none; revoking an unknown id is a clear error with bad-input status")
    func devicesCommands() async throws {
        let cli = CLI()
        defer { try? FileManager.default.removeItem(at: cli.dataDirectory) }
        // Given a data folder where nothing paired
        // When devices are listed, as text and JSON, and an unknown one is revoked
        let list = try await cli.run(["devices", "list"])
        let json = try await cli.run(["devices", "list", "--json"])
        let revoke = try await cli.run(["devices", "revoke", "7"])
        // Then the list says how a browser pairs, the JSON is an empty array, and the revoke names the id
        #expect(list.status == 0 && list.stdout.contains("No paired devices") && list.stdout.contains("kiosk devices pair"))
        #expect(json.status == 0)
        #expect((try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [Any])?.isEmpty == true)
        #expect(revoke.status == 2)
        #expect(revoke.stderr.hasPrefix("error: ") && revoke.stderr.contains("Not found: paired device 7 (`kiosk devices list` shows them)"))
    }
}
