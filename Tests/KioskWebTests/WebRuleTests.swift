import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskTestSupport
@testable import KioskDebugger
import Testing
@testable import KioskWeb

/// The rewrite rules in the console and its JSON: made from a logged request, edited with errors shown in
/// place, switched, deleted, and kept from a breakpoint edit.
@Suite("Debugger: rewrite rules")
struct WebRuleTests {
    static let token = String(repeating: "a", count: 64)
    static let cookie: HTTPFields = [.cookie: "\(CSRFProtection.cookieName)=\(token)"]

    /// The newest logged request of `source`'s id.
    private func newestID(_ client: some TestClientProtocol, source: String = "rickandmorty") async throws -> Int {
        let list = try await client.get("/debug/api/requests?source=\(source)&limit=1")
        let records = try #require(try JSONSerialization.jsonObject(with: Data(list.bytes)) as? [[String: Any]])
        return try #require(records.first?["id"] as? Int)
    }

    /// Logs an app's GET of http://localhost:3000/api/data.json?page=2 under its host, as `kiosk proxy` logs it; its id.
    private static func appendAppsRequest(_ harness: Harness) throws -> Int64 {
        let log = try #require(harness.kiosk.debugger.log)
        return try log.append(RequestRecord(startedAt: harness.kiosk.now(), source: nil, endpoint: "localhost:3000", method: "GET",
                                            url: "http://localhost:3000/api/data.json?page=2", status: 200,
                                            timings: RequestTimings(total: 0.01), decision: .network))
    }

    /// A rule form with every field, as the browser sends it.
    private func form(name: String = "", endpoint: String = "rickandmorty.characters", status: String = "", patch: String = "",
                      latency: String = "", fail: String = "", extra: [(String, String)] = []) -> [(String, String)] {
        [("csrf", Self.token), ("name", name), ("enabled", "1"), ("endpoint", endpoint), ("url_pattern", ""), ("method", "*"),
         ("status", status), ("set_headers", ""), ("remove_headers", ""), ("patch", patch), ("latency_ms", latency), ("fail", fail)] + extra
    }

    @Test("Make a rule on a logged request opens the form filled in from it; saved, the rule changes the next answer and the request's page names it")
    func makeRuleFromRequest() async throws {
        try await withWeb { harness, client in
            // Given the Rick and Morty list, fetched once and logged, a page a browser may keep
            let first = try await client.get("/rickandmorty")
            #expect(first.header("Cache-Control") == "private, no-cache")
            let id = try await newestID(client)
            // When Make a rule is pressed on its page
            let detail = try await client.get("/debug/requests/\(id)")
            #expect(detail.body.contains("action=\"/debug/rules/new\"") && detail.body.contains("name=\"request\" value=\"\(id)\""))
            let new = try await client.get("/debug/rules/new?request=\(id)", headers: Self.cookie)
            // Then the form holds the exchange's endpoint, method and status, and no patch
            #expect(new.status == .ok)
            #expect(new.body.contains("<option value=\"rickandmorty.characters\" selected>"))
            #expect(new.body.contains("<option value=\"GET\" selected>"))
            #expect(new.body.contains("name=\"status\" value=\"200\""))
            #expect(new.body.contains("name=\"from_request\" value=\"\(id)\""))
            // When it is saved with a patch (without the form's token it is refused)
            let patch = #"[{"op": "replace", "path": "/results/0/name", "value": "Console Rule Rick"}]"#
            let fields = form(name: "Rename", status: "200", patch: patch, extra: [("from_request", String(id))])
            #expect(try await client.post("/debug/rules", form: Array(fields.dropFirst()), cookie: Self.token).status == .forbidden)
            let saved = try await client.post("/debug/rules", form: fields, cookie: Self.token)
            #expect(saved.status == .seeOther && saved.header("Location") == "/debug/rules#rule-1")
            let rule = try harness.kiosk.debugger.rules.rule(id: 1)
            #expect(rule.origin == "from request #\(id)" && rule.actions.patch == patch && rule.match.method == "*")
            // Then the next answer is rewritten, without any pause
            let refreshed = try await client.get("/rickandmorty?refresh=1")
            #expect(refreshed.body.contains("Console Rule Rick"))
            #expect(harness.kiosk.debugger.breakpoints.paused.isEmpty)
            // And, Kiosk's store keeping none of it, the page is one no browser or phone may keep either
            #expect(refreshed.header("Cache-Control") == "no-store" && refreshed.header("Cache-Status")?.hasSuffix("detail=edited") == true)
            // And that request's page says the rule touched it, with a link to the rule
            let touched = try await client.get("/debug/requests/\(try await newestID(client))")
            #expect(touched.body.contains("Touched by") && touched.body.contains("href=\"/debug/rules/1\""))
            #expect(touched.body.contains("applied: status 200 (unchanged); patched the body (1 operation)"))
            // And in Spanish it says so in Spanish
            let spanish = try await client.get("/debug/requests/\(try await newestID(client))", headers: [.acceptLanguage: "es"])
            #expect(spanish.body.contains("aplicada: estado 200 (sin cambios); parcheó el cuerpo (1 operación)"))
            // And the JSON record carries it too
            let json = try await client.get("/debug/api/requests/\(try await newestID(client))")
            #expect(json.body.contains("\"touchedBy\"") && json.body.contains("\"kind\" : \"rule\""))
        }
    }

    @Test("Make a rule on an app's request through kiosk proxy fills in its URL, not its host as an endpoint, and saves as offered")
    func makeRuleFromProxiedRequest() async throws {
        try await withWeb { harness, client in
            // Given an app's request logged under its host, as the proxy logs it
            let id = try Self.appendAppsRequest(harness)
            // When Make a rule is pressed on it
            let new = try await client.get("/debug/rules/new?request=\(id)", headers: Self.cookie)
            // Then the form matches its URL, query and all (the request it was made from), with any endpoint
            #expect(new.status == .ok)
            #expect(new.body.contains("name=\"url_pattern\" value=\"http://localhost:3000/api/data.json?page=2\""), "\(new.body)")
            #expect(new.body.contains("<option value=\"\" selected>"))
            // And saved as offered, with a status to answer with, the rule is kept
            var fields = form(name: "App data", endpoint: "", status: "503", extra: [("from_request", String(id))])
            fields[fields.firstIndex { $0.0 == "url_pattern" }!].1 = "http://localhost:3000/api/data.json"
            let saved = try await client.post("/debug/rules", form: fields, cookie: Self.token)
            #expect(saved.status == .seeOther, "\(saved.body)")
            #expect(try harness.kiosk.debugger.rules.rule(id: 1).match.urlPattern == "http://localhost:3000/api/data.json")
        }
    }

    @Test("A rule's edit saved after the rule changed elsewhere is refused, not written over that change; saved again, it replaces it")
    func editOfAChangedRule() async throws {
        try await withWeb { harness, client in
            // Given a rule, and its form opened in the console
            let rule = try harness.kiosk.debugger.rules.add(RewriteRule(name: "Slow", match: .init(endpoint: "rickandmorty.characters"),
                                                                         actions: .init(latencyMilliseconds: 100)))
            let page = try await client.get("/debug/rules/\(rule.id)", headers: Self.cookie).body
            let version = try #require(page.range(of: #"name="version" value=""#).map { page[$0.upperBound...].prefix { $0 != "\"" } })
            // When the CLI changes its status a moment later, and then the console's form is saved with its latency changed
            await harness.now.advance(by: .seconds(1))
            var changed = rule
            changed.actions.status = 418
            try harness.kiosk.debugger.rules.update(id: rule.id, to: changed)
            var fields = form(name: "Slow", status: "", latency: "250")
            fields.append(("version", String(version)))
            let saved = try await client.post("/debug/rules/\(rule.id)", form: fields, cookie: Self.token)
            // Then the save is refused, saying why, the CLI's 418 kept
            #expect(saved.status == .conflict)
            #expect(saved.body.contains("this rule was changed elsewhere"), "\(saved.body.prefix(300))")
            #expect(try harness.kiosk.debugger.rules.rule(id: rule.id).actions.status == 418)
            // And the form it came back with, saved again, replaces it knowingly
            let again = try #require(saved.body.range(of: #"name="version" value=""#).map { saved.body[$0.upperBound...].prefix { $0 != "\"" } })
            fields[fields.count - 1] = ("version", String(again))
            #expect(try await client.post("/debug/rules/\(rule.id)", form: fields, cookie: Self.token).status == .seeOther)
            #expect(try harness.kiosk.debugger.rules.rule(id: rule.id).actions.latencyMilliseconds == 250)
        }
    }

    @Test("Pause on an app's proxied request sets a breakpoint on its address, query aside, not on its whole host")
    func pauseAnAppsAddress() async throws {
        try await withWeb { harness, client in
            // Given an app's request logged under its host, as the proxy logs it
            let id = try Self.appendAppsRequest(harness)
            // When its page is opened, Then its pause button is for its address
            let page = try await client.get("/debug/requests/\(id)", headers: Self.cookie).body
            #expect(page.contains(#"action="/debug/breakpoints/http%3A%2F%2Flocalhost%3A3000%2Fapi%2Fdata.json""#), "\(page)")
            // And pressed, the next request to that address pauses, another of the host does not
            let set = try await client.post("/debug/breakpoints/http%3A%2F%2Flocalhost%3A3000%2Fapi%2Fdata.json",
                                             form: [("csrf", Self.token), ("request", "pause"), ("response", "ignore"), ("error", "ignore")],
                                             cookie: Self.token)
            #expect(set.status == .seeOther)
            let breakpoints = harness.kiosk.debugger.breakpoints
            #expect(breakpoints.setting(for: "http://localhost:3000/api/data.json").request == .pause)
            #expect(breakpoints.setting(for: "localhost:3000").request != .pause)
        }
    }

    @Test("A rule that cannot be saved comes back with the reason and every field as typed; nothing is added")
    func errorsShownInPlace() async throws {
        try await withWeb { harness, client in
            let cases: [([(String, String)], String)] = [
                (form(name: "Broken <b>", patch: #"[{"op": "replace", "path": "/a"}]"#),
                 "Not saved: The JSON Patch is not valid: operation 1 (replace /a): “value” is missing"),
                (form(status: "abc"), "Not saved: The status must be a number from 200 to 599 (a 1xx is no answer)."),
                (form(endpoint: "", status: "503"), "Say which requests the rule is for"),
                (form(status: "503", fail: "timeout"), "A rule that fails the request has no answer to rewrite"),
                (form(latency: "fast"), "The latency must be a whole number of milliseconds."),
            ]
            for (fields, reason) in cases {
                let page = try await client.post("/debug/rules", form: fields, cookie: Self.token)
                #expect(page.status == .unprocessableContent, "\(reason)")
                #expect(page.body.contains(HTML.escape(reason)), "\(reason): \(page.body.prefix(200))")
            }
            // And what was typed is shown again, escaped
            let page = try await client.post("/debug/rules", form: cases[0].0, cookie: Self.token)
            #expect(page.body.contains("value=\"Broken &lt;b&gt;\""))
            #expect(page.body.contains(HTML.escape(#"[{"op": "replace", "path": "/a"}]"#)))
            #expect(try harness.kiosk.debugger.rules.all().isEmpty)
            // And an unknown field is a plain 400
            #expect(try await client.post("/debug/rules", form: form() + [("colour", "red")], cookie: Self.token).status == .badRequest)
            // And in Spanish the reason is Spanish, a URL pattern's and a field that is no number too, the fields still as typed
            let spanish: HTTPFields = [.acceptLanguage: "es"]
            for (fields, reason) in [(form(endpoint: "", status: "503"), "Indica a qué solicitudes se aplica la regla"),
                                     (form(endpoint: "", status: "503").map { $0.0 == "url_pattern" ? ($0.0, "http://[::1") : $0 },
                                      "El patrón de URL no es una URL con host"),
                                     (form(status: "abc"), "El estado debe ser un número del 200 al 599 (un 1xx no es una respuesta)."),
                                     (form(latency: "fast"), "La latencia debe ser un número entero de milisegundos."),
                                     (form(fail: "boom"), "El fallo debe ser uno de estos: timeout, offline, reset."),
                                     // (a JSON Patch's own mistake, and its text's JSON mistake, are Spanish as well)
                                     (form(patch: #"[{"op": "replace", "path": "/a"}]"#),
                                      "El JSON Patch no es válido: operación 1 (replace /a): falta «value»"),
                                     (form(patch: #"[{"op": "add", "path": "/a", "value": tru}]"#),
                                      "El JSON Patch no es válido: El parche no es JSON: JSON no válido en $[0].value (byte 38): se esperaba true")] {
                let page = try await client.post("/debug/rules", form: fields, cookie: Self.token, headers: spanish)
                #expect(page.status == .unprocessableContent && page.body.contains(HTML.escape(reason)), "\(reason): \(page.body.prefix(300))")
            }
        }
    }

    @Test("The rules page lists each rule with its hits and switches; edit, disable, reset and delete work; unknown ids are 404")
    func manageRules() async throws {
        try await withWeb { harness, client in
            // Given a rule setting a header, hit once
            let rule = try harness.kiosk.debugger.rules.add(RewriteRule(
                match: RewriteRule.Match(endpoint: "rickandmorty.characters"),
                actions: RewriteRule.Actions(setHeaders: [.init(name: "X-Kiosk-Test", value: "1")])))
            _ = try await client.get("/rickandmorty")
            harness.kiosk.debugger.rules.saveHits(force: true)
            // Then the page lists it with its hit and its switches
            let page = try await client.get("/debug/rules", headers: Self.cookie)
            #expect(page.body.contains("id=\"rule-\(rule.id)\"") && page.body.contains("rickandmorty.characters → set X-Kiosk-Test"))
            #expect(page.body.contains("<td class=\"num\" data-label=\"Hits\">1</td>"))
            #expect(page.body.contains("action=\"/debug/rules/\(rule.id)/disable\""))
            // When it is edited in its form
            let editor = try await client.get("/debug/rules/\(rule.id)", headers: Self.cookie)
            #expect(editor.body.contains("Edit rule #\(rule.id)") && editor.body.contains("X-Kiosk-Test: 1</textarea>"))
            let saved = try await client.post("/debug/rules/\(rule.id)", form: form(name: "Teapot", status: "418"), cookie: Self.token)
            #expect(saved.status == .seeOther)
            #expect(try harness.kiosk.debugger.rules.rule(id: rule.id).actions.status == 418)
            // And switched off, its hits reset, then deleted
            for action in ["disable", "reset-hits"] {
                #expect(try await client.post("/debug/rules/\(rule.id)/\(action)", form: [("csrf", Self.token)], cookie: Self.token).status == .seeOther)
            }
            let kept = try harness.kiosk.debugger.rules.rule(id: rule.id)
            #expect(!kept.isEnabled && kept.hits == 0)
            #expect(try await client.post("/debug/rules/\(rule.id)/delete", form: [("csrf", Self.token)], cookie: Self.token).status == .seeOther)
            #expect(try harness.kiosk.debugger.rules.all().isEmpty)
            // And unknown rules and actions are clear 404s
            #expect(try await client.get("/debug/rules/\(rule.id)").status == .notFound)
            #expect(try await client.post("/debug/rules/\(rule.id)/enable", form: [("csrf", Self.token)], cookie: Self.token).status == .notFound)
            #expect(try await client.post("/debug/rules/\(rule.id)", form: form(status: "500"), cookie: Self.token).status == .notFound)
            #expect(try await client.post("/debug/rules/1/explode", form: [("csrf", Self.token)], cookie: Self.token).status == .notFound)
            #expect(try await client.get("/debug/rules/new?request=999999").status == .notFound)
        }
    }

    @Test("The JSON API lists, creates, replaces and deletes rules; a write not in JSON or from another site is refused")
    func jsonAPI() async throws {
        try await withWeb { harness, client in
            func send(_ method: HTTPRequest.Method, _ uri: String, _ body: String, headers extra: HTTPFields = [:]) async throws -> Fetched {
                var headers = extra
                if headers[.contentType] == nil { headers[.contentType] = "application/json" }
                return try await client.execute(uri: uri, method: method, headers: headers, body: ByteBuffer(string: body)) { response in
                    Fetched(status: response.status, headers: response.headers, body: String(buffer: response.body),
                            bytes: Array(response.body.readableBytesView))
                }
            }
            let definition = #"""
                {"name": "Slow", "match": {"endpoint": "rickandmorty.characters", "method": "GET"},
                 "actions": {"latencyMilliseconds": 5, "patch": [{"op": "add", "path": "/extra", "value": {"z": 1, "a": 2}}]}}
                """#
            // When a rule is created
            let created = try await send(.post, "/debug/api/rules", definition)
            #expect(created.status == .created)
            let json = try created.json()
            let id = try #require(json["id"] as? Int)
            #expect(json["displayName"] as? String == "Slow" && json["origin"] as? String == "added through the JSON API")
            // Then it is listed, and the patch kept its members' order
            let listed = try await client.get("/debug/api/rules")
            #expect(listed.status == .ok && listed.body.contains("\"Slow\""))
            let patch = try #require(try harness.kiosk.debugger.rules.rule(id: id).actions.patch)
            #expect(try #require(patch.range(of: "\"z\"")).lowerBound < (try #require(patch.range(of: "\"a\""))).lowerBound)
            // And it is replaced with PUT, and deleted with DELETE
            let replaced = try await send(.put, "/debug/api/rules/\(id)", #"{"match": {"endpoint": "rickandmorty.characters"}, "actions": {"status": 418}}"#)
            #expect(try replaced.status == .ok && (try replaced.json()["actions"] as? [String: Any])?["status"] as? Int == 418)
            #expect(try await send(.delete, "/debug/api/rules/\(id)", "").status == .noContent)
            let gone = try await client.get("/debug/api/rules/\(id)")
            #expect(try gone.status == .notFound && (try gone.json()["error"] as? String)?.contains("rewrite rule \(id)") == true)
            // And bad rules are 400s in JSON saying why, writes not in JSON are 415s, writes from another site 403s
            let invalid = try await send(.post, "/debug/api/rules", #"{"match": {"endpoint": "rickandmorty.characters"}, "actions": {"patch": [{"op": "move", "path": "/a"}]}}"#)
            #expect(try invalid.status == .badRequest && (try invalid.json()["error"] as? String)?.contains("operation 1 (move /a): “from” is missing") == true)
            let text = try await send(.post, "/debug/api/rules", definition, headers: [.contentType: "text/plain"])
            #expect(text.status == .unsupportedMediaType)
            let forged = try await send(.post, "/debug/api/rules", definition, headers: [.origin: "http://evil.test"])
            #expect(forged.status == .forbidden)
            // And so are writes a browser says another site or another port of this one sent, whether or not it names the origin
            for site in ["cross-site", "same-site"] {
                let fetched = try await send(.post, "/debug/api/rules", definition, headers: [HTTPField.Name("Sec-Fetch-Site")!: site])
                #expect(fetched.status == .forbidden, "\(site)")
            }
            #expect(try harness.kiosk.debugger.rules.all().isEmpty)
            let own = try await send(.post, "/debug/api/rules", definition, headers: [HTTPField.Name("Sec-Fetch-Site")!: "same-origin"])
            #expect(own.status == .created)
        }
    }

    @Test("Keep returning this on a paused response continues it with the edit and makes a rule; the next answer is the edit, without pausing")
    func keepReturningThis() async throws {
        try await withWeb { harness, client in
            // Given a response breakpoint and a page waiting at it
            let (page, paused) = try await Self.pageWaitingAtItsAnswer(harness, client)
            let editor = try await client.get("/debug/paused/\(paused.id)", headers: Self.cookie)
            #expect(editor.body.contains("name=\"keep\""))
            // When the edit is sent with Keep returning this
            let renamed = try #require(paused.responseText).replacingOccurrences(of: "\"name\":\"Rick Sanchez\"", with: "\"name\":\"Kept Rick\"")
            // (from a Spanish console: the rule is named in its language)
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", Self.token), ("action", "edit"), ("status", "200"),
                                                                               ("body", renamed), ("keep", "1")], cookie: Self.token,
                                             headers: [.acceptLanguage: "es"])
            #expect(sent.status == .seeOther)
            #expect(try await page.value.body.contains("Kept Rick"))
            // Then a rule replaces that request's whole body with the edit, from now on
            let rule = try #require(try harness.kiosk.debugger.rules.all().first)
            #expect(rule.actions.status == 200 && rule.actions.patch?.contains("\"path\": \"\"") == true)
            #expect(rule.origin == "from a breakpoint edit of paused #\(paused.id)")
            #expect(rule.name == "Seguir devolviendo la edición de rickandmorty.characters", "\(rule.name)")
            try harness.kiosk.debugger.breakpoints.set(BreakpointSetting(), for: "rickandmorty.characters")
            let again = try await client.get("/rickandmorty?refresh=1")
            #expect(again.body.contains("Kept Rick") && harness.kiosk.debugger.breakpoints.paused.isEmpty)
        }
    }

    @Test("Keep returning this checked with Send unchanged makes the rule from the answer as shown, rather than nothing unsaid")
    func keepReturningUnchanged() async throws {
        try await withWeb { harness, client in
            // Given a page waiting at a response breakpoint
            let (page, paused) = try await Self.pageWaitingAtItsAnswer(harness, client)
            // When it is sent unchanged with the box checked
            let sent = try await client.post("/debug/paused/\(paused.id)", form: [("csrf", Self.token), ("action", "continue"), ("keep", "1")],
                                             cookie: Self.token)
            #expect(sent.status == .seeOther)
            #expect(try await page.value.body.contains("Rick Sanchez"))
            // Then a rule keeps returning the answer as it came
            let rule = try #require(try harness.kiosk.debugger.rules.all().first)
            #expect(rule.actions.status == 200 && rule.actions.patch?.contains("Rick Sanchez") == true)
            #expect(rule.origin == "from a breakpoint edit of paused #\(paused.id)")
        }
    }

    /// The Rick and Morty list asked for with a response breakpoint set on its endpoint: the page's request, and its pause.
    private static func pageWaitingAtItsAnswer(_ harness: Harness, _ client: any TestClientProtocol) async throws
        -> (page: Task<Fetched, any Error>, paused: PausedExchange) {
        try harness.kiosk.debugger.breakpoints.set(BreakpointSetting(response: .pause), for: "rickandmorty.characters")
        let page = Task { try await client.get("/rickandmorty", headers: Self.cookie) }
        for _ in 0..<2000 where harness.kiosk.debugger.breakpoints.paused.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
        return (page, try #require(harness.kiosk.debugger.breakpoints.paused.first))
    }
}
