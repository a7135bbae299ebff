import Foundation
import Hummingbird
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("One route table for the console")
struct ConsoleRouteTableTests {
    /// One address of every kind of console route, with the kind it is answered by.
    static let samples: [(ConsoleRoute, ConsoleRoute.Kind)] = [
        (.requests, .requests), (.request(7), .request), (.compose(7), .composeForm), (.compose(7), .compose), (.diff, .diff),
        (.insights, .insights), (.endpoints, .endpoints), (.paused, .paused), (.pausedExchange(3), .pausedExchange),
        (.pausedExchange(3), .decide), (.mocks, .mocks), (.mock(4), .mock), (.mock(4), .saveMock), (.rules, .rules), (.rules, .saveNewRule), (.newRule, .newRule),
        (.rule(2), .rule), (.rule(2), .saveRule), (.events, .events), (.har, .har), (.login, .loginForm), (.login, .login), (.replay(7), .replay),
        (.mockFrom(7), .mockFrom), (.breakpoint(endpoint: "rickandmorty.characters"), .breakpoint),
        (.breakpoint(endpoint: "a b/c"), .breakpoint), (.apiRequests, .apiRequests), (.apiRequest(7), .apiRequest),
        (.apiResend(7), .apiResend), (.apiInsights, .apiInsights), (.apiEndpoints, .apiEndpoints), (.apiPaused, .apiPaused), (.apiInFlight, .apiInFlight),
        (.apiRules, .apiRules), (.apiRules, .apiAddRule), (.apiRule(2), .apiRule), (.apiRule(2), .apiReplaceRule),
        (.apiRule(2), .apiDeleteRule), (.clear, .clear), (.recording, .recording), (.proxy, .proxy),
        (.proxyCertificate("ca.pem"), .proxyCertificate), (.apiProxy, .apiProxy), (.proxyCache, .proxyCache), (.proxyCacheEntry(5), .proxyCacheEntry), (.apiProxyCache, .apiProxyCache), (.apiProxyCache, .apiSwitchProxyCache),
    ] + ConsoleRoute.MockAction.allCases.map { (.mockAction(4, $0), .mockAction) }
      + ConsoleRoute.RuleAction.allCases.map { (.ruleAction(4, $0), .ruleAction) }

    /// Whether `path` (without query or anchor) fits `pattern`, a `{name}` standing for one non-empty segment.
    static func matches(_ path: String, _ pattern: String) -> Bool {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        let expected = pattern.split(separator: "/", omittingEmptySubsequences: false)
        return segments.count == expected.count && zip(segments, expected).allSatisfy { segment, part in
            part.hasPrefix("{") ? !segment.isEmpty : segment == part
        }
    }

    @Test("The router registers every console route from the table, and no /debug route the table does not describe")
    func registeredFromTheTable() async throws {
        try await withHarness { harness in
            // Given the web app's router with the console
            let registered = Set(buildRouter(kiosk: harness.kiosk).router.routes
                .filter { $0.path.description.hasPrefix(ConsoleRoute.prefix) }
                .map { "\($0.method) \($0.path.description)" })
            // Then its /debug routes are exactly the table's kinds
            let table = Set(ConsoleRoute.Kind.allCases.map { "\($0.method) \($0.pattern.description)" })
            #expect(registered == table)
            #expect(table.count == ConsoleRoute.Kind.allCases.count, "two kinds share a method and pattern")
        }
    }

    @Test("Every kind of console address fits the pattern its route is registered under, under the console's prefix")
    func addressesFitTheirPatterns() {
        // Given an address of every kind (every kind is sampled)
        #expect(Set(Self.samples.map(\.1)) == Set(ConsoleRoute.Kind.allCases))
        for (route, kind) in Self.samples {
            // Then its path fits its kind's pattern, and starts with the prefix the client table lists
            #expect(Self.matches(route.path, kind.pattern.description), "\(route.path) does not fit \(kind.pattern)")
            #expect(route.path.hasPrefix(ConsoleRoute.prefix))
        }
        // And an id with a slash stays in its segment; a query and an anchor are encoded
        #expect(ConsoleRoute.breakpoint(endpoint: "a b/c").path == "/debug/breakpoints/a%20b%2Fc")
        #expect(ConsoleRoute.diff.path(QueryString(["a": "1", "b": nil])) == "/debug/diff?a=1")
        #expect(ConsoleRoute.rules.path(anchor: "rule-5") == "/debug/rules#rule-5")
    }

    @Test("No Swift source but the route table spells a console address")
    func noOtherSourceSpellsAnAddress() throws {
        // Given the Swift sources of the console and of the reader's web app
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
        var checked = 0
        for module in ["KioskConsole", "KioskWeb"] {
            let folder = sources.appendingPathComponent(module)
            for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where name.hasSuffix(".swift") && name != "ConsoleRoutes.swift" {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                // Then none writes "/debug in code (comments may name an address)
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                for line in code {
                    #expect(!line.contains("\"/debug"), "\(module)/\(name) spells a console address: \(line.trimmingCharacters(in: .whitespaces))")
                }
                checked += 1
            }
        }
        #expect(checked >= 20)
    }
}
