import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskDebugger
import KioskTestSupport
import Testing
@testable import KioskConsole
@testable import KioskWeb

@Suite("The console in the browser's language")
struct ConsoleLanguageTests {
    /// The words of `words` that are plain text (not functions), by name.
    static func texts(_ words: ConsoleWords) -> [String: String] {
        Dictionary(uniqueKeysWithValues: Mirror(reflecting: words).children.compactMap { child in
            (child.value as? String).flatMap { value in child.label.map { ($0, value) } }
        })
    }

    @Test("A Spanish browser gets every console page in Spanish, with no English sentence of the console left, and the script's words too")
    func spanishConsole() async throws {
        try await withWeb { harness, client in
            // Given a logged request, a mock rule and a rewrite rule
            _ = try await client.get("/rickandmorty")
            try harness.kiosk.debugger.mocks.add([MockRule(method: "GET", urlPattern: "http://demo.invalid/dogs.json", status: 200, headers: [],
                                                           body: Data("[]".utf8), origin: "from request #9")])
            _ = try harness.kiosk.debugger.rules.add(try RewriteRule(json: Data(#"{"match": {"endpoint": "dogs.list"}, "actions": {"status": 503}}"#.utf8),
                                                                   origin: "added in the console"))
            let id = try #require(try harness.kiosk.debugger.records(matching: RequestFilter()).first?.id)
            let spanish: HTTPFields = [.acceptLanguage: "es-ES,es;q=0.9"]
            let english = Self.texts(.english), translated = Self.texts(.spanish)
            // (sentences only: words such as "Total" or "Endpoint" are the same in both)
            let sentences = english.filter { name, text in text.count > 12 && translated[name] != text }
            #expect(sentences.count > 100)
            // (and a proxy attached, so that its page shows everything it has)
            harness.kiosk.attachProxy { ConsoleProxyPageTests.overview }
            for route in [ConsoleRoute.requests, .request(id), .compose(id), .insights, .endpoints, .paused, .mocks, .rules, .newRule, .proxy] {
                // When a page is opened in Spanish
                let page = try await client.get(route.path, headers: spanish)
                #expect(page.status == .ok, "\(route.path)")
                // Then it speaks Spanish, and no English sentence of the console is on it
                #expect(page.body.contains("lang=\"es\""), "\(route.path)")
                for (name, text) in sentences {
                    #expect(!page.body.contains(HTML.text(text).rendered), "\(route.path) has the English \(name): \(text)")
                }
            }
            // And where a rule and a mock came from, kept in English in their files, is said in Spanish
            #expect(try await client.get(ConsoleRoute.mocks.path, headers: spanish).body.contains("de la solicitud n.º 9"))
            #expect(try await client.get(ConsoleRoute.rules.path, headers: spanish).body.contains("añadida en la consola"))
            // And how an endpoint's answers are kept, and the tree editor's type names
            let endpoints = try await client.get(ConsoleRoute.endpoints.path, headers: spanish).body
            #expect(endpoints.contains("si no 24 h"))
            // And what each endpoint's body yields, after its shape (the same in every language)
            for yields in [ResponseModel.Yield.rankedArticles(20), .oneCharacter, .oneIDAnswersOne("Character"), .userEditedDogs, .rasterImage] {
                #expect(endpoints.contains(HTML.text(ConsoleWords.spanish.responseYields(yields)).rendered), "\(yields)")
                #expect(!endpoints.contains(HTML.text(yields.english).rendered), "\(yields): English on a Spanish page")
            }
            #expect(endpoints.contains("[Character] (con un solo id: Character)"))
            #expect(endpoints.contains("GET {la dirección de la imagen} · ") && !endpoints.contains("picture&#39;s") && !endpoints.contains("picture's"))
            #expect(try await client.get(ConsoleRoute.requests.path, headers: spanish).body.contains("verdadero o falso"))
            // And a catalog is called what the reader calls it (Perros, not Dogs), in the list's menu and the insights
            #expect(try await client.get(ConsoleRoute.requests.path, headers: spanish).body.contains(">Perros</option>"))
            _ = try await client.get("/dogs")
            #expect(try await client.get(ConsoleRoute.insights.path, headers: spanish).body.contains(">Perros<"))
            // And a filter's mistake is said in Spanish, each kind of it
            let refused = try await client.get(ConsoleRoute.requests.path + "?filter=bogus:1", headers: spanish)
            #expect(refused.status == .badRequest && refused.body.contains("no existe la clave «bogus»") && !refused.body.contains("there is no key"))
            for filter in ["\"open", "\"a\"b", "a\"b", "-word", "status:", "status:5xx,", "slow:1s,2s", "status:7xx", "status:5xx status:4xx",
                           "has:error has:error"] {
                let page = try await client.get(ConsoleRoute.requests.path + "?filter=" + QueryString.encode(filter), headers: spanish)
                let error = try #require(RequestFilter.parseError(filter), "\(filter)")
                #expect(page.body.contains(HTML.text(ConsoleWords.spanish.filterProblem(error.reason)).rendered), "\(filter)")
                #expect(!page.body.contains(HTML.text(error.message).rendered), "\(filter): English on a Spanish page")
            }
            // And the list carries the script's words in Spanish
            let list = try await client.get(ConsoleRoute.requests.path, headers: spanish)
            #expect(list.body.contains(HTML.text(ConsoleWords.spanish.networkDebugger).rendered))
            #expect(list.body.contains("En directo"))
            #expect(list.body.contains("{count} solicitudes registradas"))
            // And an English browser still gets English
            let englishList = try await client.get(ConsoleRoute.requests.path)
            #expect(englishList.body.contains("Network debugger") && englishList.body.contains("{count} requests logged"))
        }
    }

    @Test("The console's error pages (an unknown or malformed request id, a diff without two ids, a pause that ended, a list address typed wrong, a proxy cache asked of serve) and the reader's refusals of addresses it never links speak the page's language",
          arguments: [
            ("/debug?min_ms=-5", "min_ms debe ser un número de milisegundos entre 0 y un día.", "min_ms must be a number of milliseconds"),
            ("/debug?status=zz", "El estado debe ser 2xx, 3xx, 4xx, 5xx, error o store.", "The status must be"),
            ("/debug?limit=0", "limit debe estar entre 1 y 1000.", "limit must be from 1 to 1000."),
            ("/debug?source=nope", "No hay ninguna fuente llamada «nope».", "There is no source named"),
            ("/debug/proxy/cache/999", "Este proceso no tiene caché de proxy", "No proxy cache runs in this process"),
            ("/static/none.js", "Aquí no hay ningún archivo llamado «none.js»", "There is no file named"),
            ("/image?url=x", "El parámetro url debe ser una URL http(s) absoluta.", "The url parameter must be"),
            ("/debug/requests/99999", "No hay ninguna solicitud n.º 99999 en el registro", "There is no request 99999 in the log"),
            ("/debug/requests/abc", "Un id de solicitud es un número entero positivo.", "A request id is a positive whole number."),
            ("/debug/diff?a=x", "Indica dos ids de solicitud para comparar", "Give two request ids to compare"),
            ("/debug/paused/7", "La solicitud n.º 7 ya no está en pausa", "Request 7 is not paused any more"),
            ("/debug/rules/abc", "Un id de regla es un número entero positivo.", "A rule id is a positive whole number."),
            ("/debug/mocks/0", "Un id de regla es un número entero positivo.", "A rule id is a positive whole number."),
            ("/debug/proxy/cache/abc", "El id de una respuesta guardada es un número entero positivo.", "id is a positive whole number."),
          ])
    func consoleErrorsInSpanish(path: String, spanish: String, english: String) async throws {
        try await withWeb { _, client in
            // Given a console address that names nothing there is
            // When it is opened in Spanish and in English
            let inSpanish = try await client.get(path, headers: [.acceptLanguage: "es"])
            let inEnglish = try await client.get(path)
            // Then each page says it in its language
            #expect((400..<500).contains(inSpanish.status.code) && inSpanish.body.contains(spanish), "\(inSpanish.body)")
            #expect(inEnglish.body.contains(english), "\(inEnglish.body)")
            #expect(!inSpanish.body.contains(english))
        }
    }

    @Test("Byte counts are written as each language groups its digits")
    func byteCounts() {
        // Given a body of 30,183 bytes, then one byte
        // Then English groups by commas, Spanish by points, and one byte is one byte
        #expect(ConsoleWords.english.bytes(30183) == "30,183 bytes" && ConsoleWords.spanish.bytes(30183) == "30.183 bytes")
        #expect(ConsoleWords.english.bytes(1) == "1 byte" && ConsoleWords.spanish.bytes(512) == "512 bytes")
    }

    @Test("What a mock did to an exchange, and what a rule does, are said in the page's language")
    func touchesInSpanish() async throws {
        try await withWeb { harness, client in
            // Given a mock answering the dogs list at the address it was read from, and a rule answering Rick and Morty with a 503
            _ = try await client.get("/dogs")
            let url = try #require(try harness.kiosk.debugger.records(matching: RequestFilter()).first { $0.endpoint == "dogs.list" }?.url)
            try harness.kiosk.debugger.mocks.add([MockRule(method: "GET", urlPattern: url, status: 200,
                                                           headers: [], body: Data("[]".utf8), origin: "test")])
            _ = try harness.kiosk.debugger.rules.add(try RewriteRule(json: Data(#"{"match": {"endpoint": "rickandmorty.characters"}, "actions": {"status": 503}}"#.utf8),
                                                                   origin: "test"))
            // When the dogs list is read (the mock answers) and the console opened in Spanish
            _ = try await client.get("/dogs?refresh=1")
            let listed = try #require(try harness.kiosk.debugger.records(matching: RequestFilter()).first { $0.endpoint == "dogs.list" })
            let record = try #require(try harness.kiosk.debugger.record(id: listed.id))
            let spanish: HTTPFields = [.acceptLanguage: "es"]
            let page = try await client.get(ConsoleRoute.request(record.id).path, headers: spanish).body
            let rules = try await client.get(ConsoleRoute.rules.path, headers: spanish).body
            // Then the request says what the mock did, and the rules list what the rule does, in Spanish
            #expect(page.contains("respondió con el estado 200, sin el origen") && !page.contains("without the upstream"), "\(page)")
            #expect(rules.contains("estado 503"), "\(rules)")
            // And so does the rule's name, which it was not given: the name is what it does (it said "status 503")
            #expect(rules.contains("rickandmorty.characters → estado 503</a>") && !rules.contains("→ status 503"), "\(rules)")
            // And the log and its JSON keep the English
            #expect(record.touchedBy.first?.detail == "answered with status 200, without the upstream", "\(record.url) \(record.touchedBy)")
        }
    }

    @Test("Why a body is not JSON, and why a JSON Patch cannot be read or applied, is said in Spanish for every reason")
    func jsonAndPatchProblemsInSpanish() throws {
        // Given documents each wrong in one way of the parser's, and patches each wrong in one way of RFC 6902's
        let documents = [#"{} x"#, #"{"a": "#, #"{"a": @}"#, #"{"a": tru}"#, #"{a: 1}"#, #"{"a" 1}"#, #"{"a": 1"#, #"{"a": 1 "b"}"#,
                         #"[1"#, #"[1 2]"#, "\"a\u{01}\"", #""\uD800""#, #""\uZZZZ""#, #""\u12""#, #""\q""#, #""abc"#, "-", "-x",
                         "1.", "1e", String(repeating: "[", count: 600)]
        var reasons = Set<String>()
        for document in documents {
            let error = #expect(throws: OrderedJSON.ParseError.self, "\(document.prefix(20))") { try OrderedJSON.parse(document) }
            guard let error else { continue }
            reasons.insert("\(error.reason)".prefix { $0 != "(" }.description)
            // When each is said on a Spanish page and an English one
            let spanish = ConsoleWords.spanish.jsonProblem(error), english = ConsoleWords.english.jsonProblem(error)
            // Then the English one is the parser's own, and the Spanish one has none of its English words
            #expect(english == error.description)
            #expect(spanish.hasPrefix("JSON no válido en \(error.path) (byte \(error.offset)): "), "\(spanish)")
            for word in ["expected", "unexpected", "invalid", "inside", "string", "nested", "found"] {
                #expect(!spanish.contains(word), "\(document.prefix(20)): \(spanish)")
            }
        }
        #expect(reasons.count == documents.count, "each document shows another reason: \(reasons.sorted())")
        let document = try OrderedJSON.parse(#"{"list": [1, 2], "text": "a"}"#)
        let patches = [#"[{"op": "add", "path": "a", "value": 1}]"#, #"[{"op": "add", "path": "/~2", "value": 1}]"#, #"[1]"#,
                       #"[{"op": "add", "op": "add"}]"#, #"[{"op": "add", "path": "/a"}]"#, #"[{"op": "add", "path": 3, "value": 1}]"#,
                       #"[{"op": 3}]"#, #"[{"op": "remove", "path": ""}]"#, #"[{"op": "move", "from": "/list", "path": "/list/0"}]"#,
                       #"[{"op": "fold", "path": "/a"}]"#, #"[{"op": "test", "path": "/text", "value": "b"}]"#,
                       #"[{"op": "add", "path": "/list/x", "value": 1}]"#, #"[{"op": "add", "path": "/list/5", "value": 1}]"#,
                       #"[{"op": "add", "path": "/text/a", "value": 1}]"#, #"[{"op": "remove", "path": "/list/-"}]"#,
                       #"[{"op": "remove", "path": "/nope"}]"#, #"{"op": "add"}"#, #"[{"op": "add", "path": "/a", "value": tru}]"#]
        var problems = Set<String>()
        for patch in patches {
            let error = #expect(throws: JSONPatch.Error.self, "\(patch)") { try JSONPatch(parsing: patch).apply(to: document) }
            guard let error else { continue }
            if case .operation(let problem) = error.reason {
                problems.insert("\(problem)".prefix { $0 != "(" }.description)
            } else {
                problems.insert("\(error.reason)".prefix { $0 != "(" }.description)
            }
            // (said as a rule's patch is: the console's one place for a patch's problem)
            let spanish = ConsoleWords.spanish.ruleProblem(.patchInvalid(error)), english = ConsoleWords.english.ruleProblem(.patchInvalid(error))
            #expect(english == "The JSON Patch is not valid: \(error.description)")
            #expect(spanish.hasPrefix("El JSON Patch no es válido: "), "\(spanish)")
            for word in ["operation", " is ", "must", "missing", "expected", "the root", "does not", "array index", "nothing can"] {
                #expect(!spanish.contains(word), "\(patch): \(spanish)")
            }
        }
        #expect(problems.count == patches.count, "each patch shows another reason: \(problems.sorted())")
    }

    @Test("A row pushed by the live feed is in the language of the console that follows it")
    func liveRowsFollowTheLanguage() {
        // Given a record that made no exchange (answered from the store)
        let record = RequestRecord(id: 9, startedAt: Date(timeIntervalSince1970: 0), source: .dogs, endpoint: "dogs.list", method: "GET",
                                   url: "http://demo.invalid/dogs.json", timings: RequestTimings(total: 0.001), decision: .fresh)
        // When its row is rendered for a Spanish and an English console
        let spanish = LiveRowJSON(record, .spanish).html, english = LiveRowJSON(record, .english).html
        // Then each says so in its own words
        #expect(spanish.contains(">almacén<") && !spanish.contains(">store<"))
        #expect(english.contains(">store<"))
        // And its duration has the decimals each language writes
        #expect(spanish.contains(">1,0 ms<") && english.contains(">1.0 ms<"), "\(spanish)")
    }
}

extension RequestFilter {
    /// Why `text` does not parse, or nil when it does.
    static func parseError(_ text: String) -> FilterSyntaxError? {
        do {
            _ = try RequestFilter(parsing: text)
            return nil
        } catch {
            return error
        }
    }
}
