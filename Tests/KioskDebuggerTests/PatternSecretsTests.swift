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

    @Test("Query items the log hides by their names' last word (db_secret, new_password, githubToken) are left out of patterns and ignored in matching, as listed ones are")
    func itemsHiddenByTheirLastWord() throws {
        // Given a rule made from a logged URL, those items shown as the log shows them
        let rules = RewriteRules(fileURL: nil, redactor: .standard)
        let added = try rules.add(RewriteRule(match: .init(urlPattern: "http://127.0.0.1:18700/api/items?page=12&db_secret=%3Credacted%3E"
                                                                       + "&new_password=NEWPW1&githubToken=GHTOK1"),
                                              actions: RewriteRule.Actions(status: 299)))
        // Then none of them is kept, and the app's request with its real values is matched
        #expect(added.match.urlPattern == "http://127.0.0.1:18700/api/items?page=12")
        #expect(rules.matching(HTTPRequest(url: URL(string: "http://127.0.0.1:18700/api/items?page=12&db_secret=B&new_password=C&githubToken=D")!,
                                           endpoint: "127.0.0.1:18700")).map(\.rule.id) == [added.id])
        // And a cursor is no secret: a page token stays in the pattern and is matched
        let cursor = try rules.add(RewriteRule(match: .init(urlPattern: "http://127.0.0.1:18700/api/feed?pageToken=P2"),
                                               actions: RewriteRule.Actions(status: 299)))
        #expect(cursor.match.urlPattern == "http://127.0.0.1:18700/api/feed?pageToken=P2")
    }

    @Test("An exact pattern naming an origin alone matches its root, and one in capitals matches the host as apps send it")
    func originAndCase() throws {
        let mocks = MockRules(fileURL: nil, redactor: .standard)
        let root = try mocks.add([MockRule(method: "GET", urlPattern: "http://127.0.0.1:18702", body: Data("root".utf8))])[0]
        let upper = try mocks.add([MockRule(method: "GET", urlPattern: "http://LOCALHOST:18701/upper", body: Data("up".utf8))])[0]
        #expect(mocks.match(HTTPRequest(url: URL(string: "http://127.0.0.1:18702/")!, endpoint: "e"))?.id == root.id)
        #expect(mocks.match(HTTPRequest(url: URL(string: "http://localhost:18701/upper")!, endpoint: "e"))?.id == upper.id)
        #expect(mocks.match(HTTPRequest(url: URL(string: "http://localhost:18701/other")!, endpoint: "e")) == nil)
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

    @Test("A breakpoint an older Kiosk kept with its key is found by what was typed, and turning it off drops that key from the file")
    func olderBreakpointWithAKey() throws {
        // Given a breakpoints file an older Kiosk wrote, the pattern kept as typed
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-old-breakpoints-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("breakpoints.json")
        let typed = "http://127.0.0.1:18700/api/pages?token=OLDSECRET&page=9"
        try Data(#"{"breakpoints": {"\#(typed)": {"request": "pause", "response": "ignore", "error": "ignore"}}}"#.utf8).write(to: file)
        let breakpoints = Breakpoints(fileURL: file, redactor: .standard)
        // Then it is found by what was typed
        #expect(breakpoints.setting(for: typed).request == .pause)
        // When it is turned off as typed
        try breakpoints.set(BreakpointSetting(), for: typed)
        // Then nothing of it is left, its key least of all
        #expect(try breakpoints.settings().isEmpty)
        #expect(!(try String(contentsOf: file, encoding: .utf8)).contains("OLDSECRET"))
    }

    @Test("Wildcard patterns whose query items differ only in order are one mock rule; repeated names are read in value order, as requests are")
    func wildcardQueryOrder() throws {
        let mocks = MockRules(fileURL: nil, redactor: .standard)
        let first = try mocks.add([MockRule(method: "GET", urlPattern: "http://app.test/find?q=*&a=1", body: Data("a".utf8))])[0]
        #expect(try mocks.replaced(by: MockRule(method: "GET", urlPattern: "http://app.test/find?a=1&q=*", body: Data()))?.id == first.id)
        #expect(URLPattern.queryInOrder("http://h/*?tag=b&tag=a", ignoring: []) == "http://h/*?tag=a&tag=b")
        let pattern = URLPattern("http://h/*?tag=b&tag=a", ignoring: [])
        #expect(pattern.matches(URLPattern.normalized("http://h/x?tag=b&tag=a", ignoring: [])))
    }
}
