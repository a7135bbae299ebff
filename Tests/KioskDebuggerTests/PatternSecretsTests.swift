import Foundation
import KioskCore
import Testing
@testable import KioskDebugger

@Suite("A key typed into a rule's, mock's or breakpoint's URL pattern is never kept")
struct PatternSecretsTests {
    @Test("A rewrite rule's URL pattern, exact or wildcard, is kept without its secret query items, added or edited, and still matches")
    func rewriteRulePattern() throws {
        // Given rules, and a rule made on a URL with an access token in its query
        let rules = RewriteRules(fileURL: nil, redactor: .standard)
        let rule = RewriteRule(match: .init(urlPattern: "http://127.0.0.1:18700/api/zz?access_token=RULEQSECRET&x=1"),
                               actions: RewriteRule.Actions(status: 204))
        // When it is added
        let added = try rules.add(rule)
        // Then neither the rule nor its name holds the token, and it still selects the app's request with or without it
        #expect(added.match.urlPattern == "http://127.0.0.1:18700/api/zz?x=1")
        let kept = try rules.all()
        #expect(!added.displayName.contains("RULEQSECRET") && !String(describing: kept).contains("RULEQSECRET"))
        #expect(rules.matching(HTTPRequest(url: URL(string: "http://127.0.0.1:18700/api/zz?x=1&access_token=other")!,
                                           endpoint: "127.0.0.1:18700")).map(\.rule.id) == [added.id])
        // And an edit to a wildcard pattern with a key in it keeps the rest of the pattern as written, the key left out
        var edited = added
        edited.match.urlPattern = "http://127.0.0.1:18700/api/*?token=T0KEN&page=*"
        let saved = try rules.update(id: added.id, to: edited)
        #expect(saved.match.urlPattern == "http://127.0.0.1:18700/api/*?page=*")
    }

    @Test("A mock's wildcard pattern is kept without its secret query items; adding one says which rule it replaces")
    func mockPattern() throws {
        // Given mock rules with one on a wildcard pattern
        let mocks = MockRules(fileURL: nil, redactor: .standard)
        let first = try mocks.add([MockRule(method: "GET", urlPattern: "http://app.test/find?q=*", body: Data("a".utf8))])[0]
        // When another is added for the same pattern, written with a key among its items
        let again = MockRule(method: "GET", urlPattern: "http://app.test/find?api_key=MOCKKEY&q=*", body: Data("b".utf8))
        let replaced = try mocks.replaced(by: again)
        let added = try mocks.add([again])[0]
        // Then it replaces the first (which `replaced(by:)` named beforehand), and the key is nowhere kept
        #expect(replaced?.id == first.id)
        #expect(added.urlPattern == "http://app.test/find?q=*")
        let left = try mocks.all().map(\.id)
        #expect(left == [added.id])
        // And a rule for another URL replaces none
        let none = try mocks.replaced(by: MockRule(method: "GET", urlPattern: "http://app.test/other", body: Data()))
        #expect(none == nil)
    }

    @Test("A breakpoint's URL pattern is kept without its secret query items, a query of secrets alone still selecting a bare query")
    func breakpointPattern() throws {
        // Given breakpoints
        let breakpoints = Breakpoints(fileURL: nil, redactor: .standard)
        let pause = BreakpointSetting(request: .pause, response: .ignore, error: .ignore)
        // When one is set on a URL with a token and a page, and one on a URL whose query is a token alone
        try breakpoints.set(pause, for: "http://127.0.0.1:18700/api/pages?token=BPQSECRET&page=9")
        try breakpoints.set(pause, for: "http://127.0.0.1:18700/api/me?token=BPQSECRET")
        // Then the file holds neither token, and each is found again by what was typed
        let keys = try breakpoints.settings().keys.sorted()
        #expect(keys == ["http://127.0.0.1:18700/api/me?", "http://127.0.0.1:18700/api/pages?page=9"])
        #expect(breakpoints.setting(for: "http://127.0.0.1:18700/api/pages?token=BPQSECRET&page=9") == pause)
        // And the second pauses its bare URL (with or without a token), never another query of that path
        func setting(_ url: String) -> BreakpointSetting {
            breakpoints.setting(for: HTTPRequest(url: URL(string: url)!, endpoint: "127.0.0.1:18700"))
        }
        #expect(setting("http://127.0.0.1:18700/api/me?token=other") == pause)
        #expect(setting("http://127.0.0.1:18700/api/me").request == .pause)
        #expect(setting("http://127.0.0.1:18700/api/me?page=2").isOff)
        #expect(setting("http://127.0.0.1:18700/api/pages?page=9&token=x") == pause)
    }
}
