import Foundation
import KioskTestSupport
import Testing

/// `kiosk rule`, run as the built executable against its embedded demo upstream.
@Suite("kiosk rule", .serialized)
struct RuleCLITests {
    private func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    @Test("rule add changes what the next command shows; list, show, edit, disable, reset-hits and remove manage it")
    func lifecycle() async throws {
        let cli = CLI()
        // Given a rule renaming the first character, with a header and a latency
        let added = try await cli.run(["rule", "add", "--endpoint", "rickandmorty.characters", "--name", "CLI rename",
                                 "--patch-json", #"[{"op": "replace", "path": "/results/0/name", "value": "CLI Rick"}]"#,
                                 "--set-header", "X-Kiosk-Test: 1", "--latency", "1ms"])
        #expect(added.status == 0 && added.stdout == "Added rewrite rule 1: CLI rename\n", "\(added.stderr)")
        // When the list is read
        let list = try await cli.run(["list", "rickandmorty"])
        // Then it shows the rewritten name, and the log says which rule touched the exchange
        #expect(list.status == 0 && list.stdout.contains("CLI Rick"))
        let newest = try #require((try json(try await cli.run(["log", "--json", "--limit", "1"]).stdout) as? [[String: Any]])?.first?["id"] as? Int)
        let show = try await cli.run(["log", "show", String(newest)])
        #expect(show.stdout.contains("Touched:   rule #1 CLI rename — applied: set X-Kiosk-Test; patched the body (1 operation); +1 ms"))
        // And the rule lists with its hit, in a table and in JSON (the patch as its text)
        let table = try await cli.run(["rule", "list"])
        #expect(table.stdout.contains("CLI rename") && table.stdout.contains("rickandmorty.characters"))
        let rules = try #require(try json(try await cli.run(["rule", "list", "--json"]).stdout) as? [[String: Any]])
        #expect(rules.count == 1 && rules[0]["hits"] as? Int == 1 && rules[0]["enabled"] as? Bool == true)
        #expect((rules[0]["actions"] as? [String: Any])?["patch"] as? String == #"[{"op": "replace", "path": "/results/0/name", "value": "CLI Rick"}]"#)
        // When it is edited: the patch cleared, a status set; then shown
        let edited = try await cli.run(["rule", "edit", "1", "--clear", "patch", "--clear", "latency", "--status", "503"])
        #expect(edited.status == 0 && edited.stdout.contains("Saved rewrite rule 1"))
        let detail = try await cli.run(["rule", "show", "1"])
        #expect(detail.stdout.contains("Status:    503") && !detail.stdout.contains("JSON Patch") && detail.stdout.contains("Set:       X-Kiosk-Test: 1"))
        // And it is switched off, its hits reset, and removed
        #expect(try await cli.run(["rule", "disable", "1"]).stdout == "Rewrite rule 1 is off.\n")
        #expect(try await cli.run(["rule", "reset-hits"]).status == 0)
        let off = try #require(try json(try await cli.run(["rule", "show", "1", "--json"]).stdout) as? [String: Any])
        #expect(off["enabled"] as? Bool == false && off["hits"] as? Int == 0)
        #expect(try await cli.run(["rule", "remove", "1"]).status == 0)
        #expect(try await cli.run(["rule", "list"]).stdout.hasPrefix("No rewrite rules."))
    }

    @Test("rule add --url takes a URL pattern for an app's host, as mock add --url and breakpoint do (--url-pattern the same)")
    func urlPattern() async throws {
        let cli = CLI()
        let added = try await cli.run(["rule", "add", "--url", "http://api.example.test/v1/*", "--status", "418"])
        let also = try await cli.run(["rule", "add", "--url-pattern", "https://other.example.test/*", "--status", "503"])
        #expect(added.status == 0 && also.status == 0, "\(added.stderr)\(also.stderr)")
        let rules = try #require(try json(try await cli.run(["rule", "list", "--json"]).stdout) as? [[String: Any]])
        let patterns = rules.compactMap { ($0["match"] as? [String: Any])?["urlPattern"] as? String }
        #expect(patterns == ["http://api.example.test/v1/*", "https://other.example.test/*"], "\(rules)")
    }

    @Test("--patch reads a file or standard input, and --from-request starts from a logged request's endpoint, method and status")
    func patchSources() async throws {
        let cli = CLI()
        // Given a logged request and a patch file
        #expect(try await cli.run(["list", "dogs"]).status == 0)
        let newest = try #require((try json(try await cli.run(["log", "--json", "--limit", "1"]).stdout) as? [[String: Any]])?.first?["id"] as? Int)
        let file = cli.dataDirectory.appendingPathComponent("patch.json")
        try Data(#"[{"op": "test", "path": "/0/name", "value": "Rex"}]"#.utf8).write(to: file)
        // When rules are added from the request with the file, and from standard input
        let fromRequest = try await cli.run(["rule", "add", "--from-request", String(newest), "--patch", file.path])
        #expect(fromRequest.status == 0, "\(fromRequest.stderr)")
        let input = cli.dataDirectory.appendingPathComponent("stdin.json")
        try Data(#"[{"op": "remove", "path": "/0"}]"#.utf8).write(to: input)
        let fromInput = try await cli.run(["rule", "add", "--endpoint", "dogs.list", "--patch", "-"], input: try FileHandle(forReadingFrom: input))
        #expect(fromInput.status == 0, "\(fromInput.stderr)")
        // Then the first matches the request's endpoint and method with its status, and both hold their patches
        let rules = try #require(try json(try await cli.run(["rule", "list", "--json"]).stdout) as? [[String: Any]])
        let first = try #require(rules.first)
        #expect((first["match"] as? [String: Any])?["method"] as? String == "GET")
        #expect((first["actions"] as? [String: Any])?["status"] as? Int == 200)
        #expect(first["origin"] as? String == "from request #\(newest)")
        #expect((rules.last?["actions"] as? [String: Any])?["patch"] as? String == #"[{"op": "remove", "path": "/0"}]"#)
    }

    @Test("A rule that cannot be kept is refused with the reason and exit status 2, and nothing is added", arguments: [
        (["--endpoint", "nowhere.at.all", "--status", "503"], "There is no endpoint named “nowhere.at.all”"),
        (["--endpoint", "rickandmorty.characters", "--patch-json", #"[{"op": "add", "path": "/x"}]"#],
         "The JSON Patch is not valid: operation 1 (add /x): “value” is missing"),
        (["--endpoint", "rickandmorty.characters", "--latency", "soon"], "--latency must be like 800ms"),
        (["--endpoint", "rickandmorty.characters", "--latency", "1e300s"], "The latency must be from 0 to"),
        (["--endpoint", "rickandmorty.characters", "--latency", "1e19ms"], "The latency must be from 0 to"),
        (["--endpoint", "rickandmorty.characters", "--fail", "explode"], "--fail"),
        (["--endpoint", "rickandmorty.characters", "--patch", "/nonexistent/patch.json"], "Cannot read /nonexistent/patch.json"),
        (["--endpoint", "rickandmorty.characters", "--status", "503", "--fail", "timeout"], "A rule that fails the request has no answer"),
        (["--status", "503"], "Say which requests the rule is for"),
    ])
    func badInput(arguments: [String], reason: String) async throws {
        let cli = CLI()
        let result = try await cli.run(["rule", "add"] + arguments)
        #expect(result.status == 2 && result.stderr.hasPrefix("error: ") && result.stderr.contains(reason), "\(result.stderr)")
        #expect(try await cli.run(["rule", "list"]).stdout.hasPrefix("No rewrite rules."))
        let unknown = try await cli.run(["rule", "show", "9"])
        #expect(unknown.status == 2 && unknown.stderr.contains("rewrite rule 9"))
    }
}
