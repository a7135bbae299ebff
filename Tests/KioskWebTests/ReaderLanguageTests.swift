import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("The reader in the browser's language")
struct ReaderLanguageTests {
    @Test("An item, a catalog or an address that is not there is said in the page's language, without Kiosk's internal names",
          arguments: [
            ("/rickandmorty/99999", "Este catálogo no tiene nada en esta dirección", "This catalog has nothing at this address"),
            ("/nope", "No hay ningún catálogo llamado «nope».", "There is no catalog named “nope”."),
            ("/rickandmorty/1/nothing/here", "No hay ninguna página en esta dirección.", "There is no page at this address."),
          ])
    func notFoundInTheReadersLanguage(path: String, spanish: String, english: String) async throws {
        try await withWeb { _, client in
            let inSpanish = try await client.get(path, headers: [.acceptLanguage: "es"])
            let inEnglish = try await client.get(path)
            #expect(inSpanish.status == .notFound && inSpanish.body.contains(spanish), "\(inSpanish.body)")
            #expect(inEnglish.body.contains(english), "\(inEnglish.body)")
            #expect(!inSpanish.body.contains("rickandmorty character"))
        }
    }

    @Test("A page past a catalog's last says how many it has and links to the last one, in the page's language")
    func pastTheLastPage() async throws {
        try await withWeb { _, client in
            // Given Rick and Morty's first page read (42 pages in the demo)
            _ = try await client.get("/rickandmorty")
            // When page 43 is asked for, in English and in Spanish
            let english = try await client.get("/rickandmorty?page=43")
            let spanish = try await client.get("/rickandmorty?page=43", headers: [.acceptLanguage: "es"])
            // Then each says it as a person would, with the way to the last page
            #expect(english.status == .notFound)
            #expect(english.body.contains("Rick and Morty has 42 pages."))
            #expect(english.body.contains(#"<a href="/rickandmorty?page=42">Go to the last one (page 42)</a>"#))
            #expect(!english.body.contains("there is nothing here"))
            #expect(spanish.body.contains("Rick and Morty tiene 42 páginas."))
            #expect(spanish.body.contains("Ir a la última (página 42)"))
            // And the JSON API keeps the technical message
            let json = try await client.get("/api/rickandmorty?page=43")
            #expect(json.status == .notFound && json.body.contains("page 43"))
        }
    }

    @Test("A list whose catalog sent an item it could not read says so under the list, in the page's language")
    func unreadableItemSaid() async throws {
        try await withWeb(faults: FaultSettings(badItemRate: 1)) { _, client in
            // Given a catalog whose every list answer carries one item without a name
            // When its list is read, in English and in Spanish
            let english = try await client.get("/rickandmorty")
            let spanish = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            // Then the readable items are listed, and the one left out is said, not silently dropped
            #expect(english.status == .ok && english.body.contains("1 item of this page came unreadable from the catalog and is left out."))
            #expect(spanish.body.contains("1 elemento de esta página llegó ilegible del catálogo y se omite."))
            #expect(english.body.components(separatedBy: "<li data-id=").count - 1 == 19, "\(english.body)")
        }
    }

    @Test("A refresh that fails says what went wrong as a person would, in the page's language, without the request's URL",
          arguments: [
            (FaultSettings(failureRate: 1), "Could not refresh: the catalog had a server error (HTTP 500).",
             "No se pudo actualizar: el catálogo tuvo un error de servidor (HTTP 500)."),
            (FaultSettings(rateLimitRate: 1, retryAfterSeconds: 30), "Could not refresh: the catalog asks Kiosk to slow down for 30 s.",
             "No se pudo actualizar: el catálogo pide a Kiosk que espere 30 s."),
          ])
    func failedRefreshSaid(faults: FaultSettings, english: String, spanish: String) async throws {
        try await withWeb { harness, client in
            // Given Marvel's first page stored, then an upstream that answers badly
            _ = try await client.get("/marvel")
            try await harness.demo.setFaults(faults)
            // When the page is refreshed, in English and in Spanish
            let inEnglish = try await client.get("/marvel?refresh=1")
            let inSpanish = try await client.get("/marvel?refresh=1", headers: [.acceptLanguage: "es"])
            // Then the stored page is shown with a banner saying what went wrong, and no request URL
            #expect(inEnglish.status == .ok && inEnglish.body.contains(HTML.text(english).rendered), "\(inEnglish.body)")
            #expect(inSpanish.body.contains(HTML.text(spanish).rendered), "\(inSpanish.body)")
            #expect(!inEnglish.body.contains("redacted") && !inEnglish.body.contains("/v1/public/characters?"))
        }
    }

    @Test("A search its catalog fails to answer says why and offers Retry at the same address, as a failed refresh does")
    func failedSearchOffersRetry() async throws {
        try await withWeb(faults: FaultSettings(failureRate: 1)) { _, client in
            // Given a catalog that answers every request with a server error
            // When a search is made, in English and in Spanish
            let english = try await client.get("/rickandmorty?q=Sanchez")
            let spanish = try await client.get("/rickandmorty?q=Sanchez", headers: [.acceptLanguage: "es"])
            // Then the page says the search failed, with a Retry link to the same search
            #expect(english.body.contains("Could not search the catalog: the catalog had a server error (HTTP 500)."), "\(english.body)")
            #expect(english.body.contains(#"<a class="refresh" href="/rickandmorty?q=Sanchez">Retry</a>"#), "\(english.body)")
            #expect(spanish.body.contains(#">Reintentar</a>"#), "\(spanish.body)")
        }
    }

    @Test("A page nothing is saved for, whose catalog fails, says what went wrong as a person would, in the page's language")
    func failedLoadSaid() async throws {
        try await withWeb(faults: FaultSettings(failureRate: 1)) { _, client in
            // Given a catalog that answers every request with a server error, and nothing saved
            // When its list is opened, in English and in Spanish
            let english = try await client.get("/rickandmorty")
            let spanish = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            // Then the error page says it without the request's URL
            #expect(english.status == .badGateway)
            #expect(english.body.contains("Could not load this page: the catalog had a server error (HTTP 500)."), "\(english.body)")
            #expect(spanish.body.contains("No se pudo cargar esta página: el catálogo tuvo un error de servidor (HTTP 500)."))
            #expect(!english.body.contains("/api/character"))
        }
    }

    @Test("A page nothing is saved for, whose catalog rate-limits, is a 429 with Retry-After, page and API alike, as docs/API.md says")
    func rateLimitedLoad() async throws {
        try await withWeb(faults: FaultSettings(rateLimitRate: 1, retryAfterSeconds: 30)) { _, client in
            // Given a catalog that answers every request with a 429, and nothing saved
            // When its list is opened as a page, in Spanish, and through the API
            let page = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            let api = try await client.get("/api/rickandmorty")
            // Then both pass the 429 on with when to try again, and the page's title says too many requests, not a server error
            #expect(page.status == .tooManyRequests && api.status == .tooManyRequests, "\(page.status) \(api.status)")
            #expect(page.headers[.retryAfter] == "30" && api.headers[.retryAfter] == "30")
            #expect(page.body.contains("<title>Demasiados intentos") && page.body.contains("espere 30 s"), "\(page.body.prefix(1500))")
        }
    }

    @Test("A catalog answer larger than Kiosk reads is said as such, in the page's language, not as a failed connection")
    func answerTooLargeSaid() async throws {
        try await withWeb(configure: { $0.transport.maximumBodyBytes = 256 }) { _, client in
            // Given a Kiosk that reads answers of at most 256 bytes, and nothing saved
            // When a list (whose answer is larger) is opened, in English and in Spanish
            let english = try await client.get("/rickandmorty")
            let spanish = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            // Then the error page is the upstream's (502) and names the limit, not the connection
            #expect(english.status == .badGateway)
            #expect(english.body.contains(HTML.text("Could not load this page: the catalog’s answer is larger than 256 bytes, "
                                                    + "more than Kiosk reads.").rendered), "\(english.body)")
            #expect(spanish.body.contains(HTML.text("No se pudo cargar esta página: la respuesta del catálogo ocupa más de 256 bytes, "
                                                    + "más de lo que Kiosk lee.").rendered), "\(spanish.body)")
        }
    }

    @Test("An unknown dimension agrees with its noun in Spanish (Desconocida), and a filter's 'any' is capitalized as its values")
    func spanishAgreement() async throws {
        try await withWeb { _, client in
            // Given a location whose dimension the catalog does not know (the demo's location 3)
            let page = try await client.get("/rickandmorty/location-3", headers: [.acceptLanguage: "es"])
            // Then Spanish says it in the feminine, as dimensión is
            #expect(page.body.contains("<dt>Dimensión</dt><dd>Desconocida</dd>"), "\(page.body)")
            // And the filters' first choice reads as the others do
            let list = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            #expect(list.body.contains("<option value=\"\">Todos</option>"))
        }
    }

    @Test("A female character's status and species agree with her in Spanish (Viva · Humana), in the list and on her sheet; a male one's do not change")
    func spanishCharacterAgreement() async throws {
        try await withWeb { _, client in
            // Given Summer Smith (the demo's character 3: alive, human, female) and Rick (1: alive, human, male)
            let spanish: HTTPFields = [.acceptLanguage: "es"]
            // When the list and their sheets are opened in Spanish
            let list = try await client.get("/rickandmorty", headers: spanish).body
            let summer = try await client.get("/rickandmorty/3", headers: spanish).body
            let rick = try await client.get("/rickandmorty/1", headers: spanish).body
            // Then Summer's words are feminine, in the list's row and on her sheet
            let summerRow = try #require(list.components(separatedBy: "<li data-id=\"3\"").dropFirst().first?
                .components(separatedBy: "<li data-id=").first)
            #expect(summerRow.contains("Viva · Humana") && !summerRow.contains("Vivo"), "\(summerRow)")
            #expect(summer.contains("</span>Viva</dd>") && summer.contains("<dd>Humana</dd>"), "\(summer)")
            // And Rick's stay masculine
            #expect(rick.contains("</span>Vivo</dd>") && rick.contains("<dd>Humano</dd>"), "\(rick)")
            // And English has nothing to agree
            #expect(try await client.get("/rickandmorty/3").body.contains("</span>Alive</dd>"))
        }
    }

    @Test("On a Spanish page the catalogs' own English text (titles, abstracts, bylines, names) is marked lang=en; Kiosk's words and an English page are not")
    func catalogTextMarkedEnglish() async throws {
        try await withWeb { _, client in
            let spanish: HTTPFields = [.acceptLanguage: "es"]
            // Given the NYT list and Rick's sheet, in Spanish
            let list = try await client.get("/nyt", headers: spanish).body
            let rick = try await client.get("/rickandmorty/1", headers: spanish).body
            // Then each row's title and summary say they are English
            let row = try #require(list.components(separatedBy: "<li data-id=").dropFirst().first)
            #expect(row.contains(#"<span class="title" lang="en">"#), "\(row)")
            #expect(row.contains(#"<span class="summary" lang="en">"#), "\(row)")
            // And the item's heading, its places' names and its episodes' names do too
            #expect(rick.contains(#"<h1 lang="en">Rick Sanchez</h1>"#), "\(rick)")
            #expect(rick.contains(#"<span class="name" lang="en">"#), "\(rick)")
            // And Kiosk's own words around them carry none: the page is Spanish, its status words too
            #expect(rick.contains("<html lang=\"es\"") && rick.contains("</span>Vivo</dd>"), "\(rick)")
            // And an English page marks nothing: its language is the page's
            let english = try await client.get("/rickandmorty/1").body
            #expect(english.components(separatedBy: #" lang="en""#).count - 1 == 1, "only <html> says it: \(english)")
            #expect(english.contains("<h1>Rick Sanchez</h1>") && english.contains("Planet · Dimension C-137 · "), "\(english)")
            // And Kiosk's own words that read alike in both ("21 series": Abomination's) are the page's, not marked English;
            // Marvel's credit, its own words, is
            let marvel = try await client.get("/marvel", headers: spanish).body
            let abomination = try #require(marvel.components(separatedBy: "<li data-id=\"1009146\"").dropFirst().first?
                .components(separatedBy: "</li>").first)
            #expect(abomination.contains("21 series") && !abomination.contains(#"lang="en">21 series"#), "\(abomination)")
            #expect(marvel.contains(#"<p class="attribution" lang="en">"#), "\(marvel)")
        }
    }

    @Test("A character's status and gender signs are hidden from screen readers, which read the words beside them")
    func signsHidden() async throws {
        try await withWeb { _, client in
            // When Rick's sheet is opened
            let sheet = try await client.get("/rickandmorty/1", headers: [.acceptLanguage: "es"]).body
            // Then each sign is in an aria-hidden span, and the words are outside it
            #expect(sheet.contains("<dd><span aria-hidden=\"true\">🕺 </span>Vivo</dd>"), "\(sheet)")
            #expect(sheet.contains("<dd><span aria-hidden=\"true\">♂️ </span>Masculino</dd>"), "\(sheet)")
        }
    }

    @Test("An empty Marvel collection's 'none' agrees with its noun in Spanish: Ninguna under Historias and Series, Ninguno under Cómics and Eventos")
    func spanishNoneAgrees() async throws {
        // Given each collection's Spanish name and the word said under it when empty
        let strings = Language.es.strings
        let said = ["Comics", "Series", "Stories", "Events"].map { "\(strings.collection($0)): \(strings.noneInCollection($0))" }
        // Then each agrees with its noun
        #expect(said == ["Cómics: Ninguno", "Series: Ninguna", "Historias: Ninguna", "Eventos: Ninguno"])
        #expect(Language.en.strings.noneInCollection("Stories") == "None")
        try await withWeb { _, client in
            // And a character with no stories (the demo's 1009144) says so in the feminine
            let page = try await client.get("/marvel/1009144", headers: [.acceptLanguage: "es"]).body
            #expect(page.contains("<h2>Historias (0)</h2><p class=\"status\">Ninguna</p>"), "\(page)")
        }
    }

    @Test("A list address asking for what the list does not offer is a 400 said in the page's language, the JSON keeping the detail",
          arguments: [
            ("/rickandmorty?status=zombie", "Estado no puede ser «zombie» aquí; elige entre: alive (Vivo), dead (Muerto), unknown (Desconocido).",
             "Status can’t be “zombie” here; choose one of: alive, dead, unknown.",
             "Invalid status \"zombie\" for Rick and Morty; valid values: alive, dead, unknown"),
            ("/rickandmorty?colour=red", "Esta página no tiene ningún ajuste llamado «colour»",
             "This page has no setting called “colour”", "Unknown parameter \"colour\""),
            ("/rickandmorty/1?colour=red", "Esta página no tiene ningún ajuste llamado «colour»",
             "This page has no setting called “colour”", "Unknown parameter \"colour\""),
            ("/rickandmorty?page=0", "Las páginas empiezan en la 1.", "Pages start at 1.", "Pages start at 1."),
            ("/rickandmorty?page=abc", "La página debe ser un número entero.", "The page must be a whole number.",
             "The page must be a whole number."),
            ("/marvel/abc", "Ningún elemento de este catálogo puede tener esta dirección", "No item of this catalog can have this address",
             "Marvel character IDs are numbers"),
            ("/rickandmorty?q=" + String(repeating: "a", count: 201),
             "El texto de búsqueda puede tener como mucho 200 caracteres.", "Search text can be at most 200 characters long.",
             "The search text is longer than 200 characters."),
          ])
    func badListAddressInTheReadersLanguage(path: String, spanish: String, english: String, json: String) async throws {
        try await withWeb { _, client in
            // Given a list address written by hand
            // When it is asked for in Spanish, in English and from the JSON API
            let inSpanish = try await client.get(path, headers: [.acceptLanguage: "es"])
            let inEnglish = try await client.get(path)
            let api = try await client.get("/api" + path)
            // Then each page says what is wrong as a person would, in its language, and the JSON says it technically
            #expect(inSpanish.status == .badRequest && inSpanish.body.contains(spanish), "\(inSpanish.body)")
            #expect(inEnglish.status == .badRequest && inEnglish.body.contains(english), "\(inEnglish.body)")
            let error = try api.json()["error"] as? String
            #expect(api.status == .badRequest && error?.hasPrefix(json) == true, "\(api.body)")
        }
    }

    @Test("With nothing saved and the upstream offline, the page says so as a person would, in its language")
    func offlineNothingSaved() async throws {
        var faults = FaultSettings.none
        faults.offline = true
        try await withWeb(faults: faults) { _, client in
            let english = try await client.get("/rickandmorty")
            let spanish = try await client.get("/rickandmorty", headers: [.acceptLanguage: "es"])
            #expect(english.status == .serviceUnavailable)
            #expect(english.body.contains("The catalog can’t be reached right now, and Kiosk hasn’t saved this page yet."))
            #expect(!english.body.contains("cannot connect to"))
            #expect(spanish.body.contains("No se puede contactar con el catálogo ahora mismo y Kiosk aún no ha guardado esta página."))
        }
    }

    @Test("A Spanish browser gets no English phrase of the string table, and catalog values (status, species, counts, ages) in Spanish")
    func spanishPages() async throws {
        try await withWeb { harness, client in
            // Given the English phrases of the string table that Spanish says otherwise
            let english = Dictionary(uniqueKeysWithValues: Mirror(reflecting: Strings.english).children.compactMap { child in
                (child.value as? String).flatMap { value in child.label.map { ($0, value) } }
            })
            let spanish = Dictionary(uniqueKeysWithValues: Mirror(reflecting: Strings.spanish).children.compactMap { child in
                (child.value as? String).flatMap { value in child.label.map { ($0, value) } }
            })
            let phrases = english.filter { name, text in text.count > 5 && spanish[name] != text }
            #expect(phrases.count > 20)
            let dog = try #require(try await harness.kiosk.catalog.page(PageRequest(source: .dogs)).page.items.first?.itemID)
            let headers: HTTPFields = [.acceptLanguage: "es"]
            for path in ["/", "/rickandmorty", "/rickandmorty/1", "/marvel", "/dogs", "/dogs/\(dog)", "/nyt", "/favorites",
                         "/rickandmorty?q=rick", "/no-such-catalog"] {
                // When each page is opened in Spanish
                let page = try await client.get(path, headers: headers)
                // Then none of those English phrases is on it
                for (name, text) in phrases {
                    #expect(!page.body.contains(">" + HTML.text(text).rendered + "<"), "\(path) has the English \(name): \(text)")
                }
            }
            // And the catalogs' own values are said in Spanish
            let rick = try await client.get("/rickandmorty", headers: headers).body
            #expect(rick.contains("Vivo · Humano") && !rick.contains("Alive · Human"))
            let marvel = try await client.get("/marvel", headers: headers).body
            #expect(marvel.contains("cómics") && !marvel.contains(" comics"))
            // (One series is one serie; counts are grouped as each language groups them)
            #expect(Language.es.strings.marvelCounts(1121, 1) == "1121 cómics · 1 serie")
            #expect(Language.en.strings.marvelCounts(1121, 726) == "1,121 comics · 726 series")
            let dogs = try await client.get("/dogs", headers: headers).body
            #expect(dogs.contains("Casi ") && !dogs.contains("Almost "))
            let sheet = try await client.get("/rickandmorty/1", headers: headers).body
            #expect(sheet.contains("Humano") && sheet.contains("Masculino"))
        }
    }
}

/// A request the reader refuses before any catalog is asked, with what its page says in each language.
struct RefusedRequest: Sendable, CustomTestStringConvertible {
    /// A form POST when set (its CSRF token is filled in when `withToken`), else a GET.
    var form: [(String, String)]?
    let path: String
    var headers: HTTPFields = [:]
    var withToken = false
    let status: HTTPResponse.Status
    let spanish: String
    let english: String

    var testDescription: String { (form == nil ? "GET " : "POST ") + path.prefix(60) }

    static let all: [RefusedRequest] = [
        RefusedRequest(path: "/rickandmorty?page=1&page=2", status: .badRequest,
                       spanish: "El parámetro «page» aparece dos veces.", english: "The parameter \"page\" is given twice."),
        RefusedRequest(path: "/rickandmorty?q=%zz", status: .badRequest,
                       spanish: "La consulta de la dirección no está bien codificada con «%».",
                       english: "The query string is not validly percent-encoded."),
        RefusedRequest(path: "/rickandmorty?q=%01", status: .badRequest,
                       spanish: "La consulta de la dirección contiene caracteres de control.",
                       english: "The query string contains control characters."),
        RefusedRequest(path: "/rickandmorty?q=" + String(repeating: "a", count: 4100), status: .badRequest,
                       spanish: "La consulta de la dirección tiene más de 4096 caracteres.",
                       english: "The query string is longer than 4096 characters."),
        RefusedRequest(path: "/image", status: .badRequest,
                       spanish: "El parámetro url es obligatorio.", english: "The url parameter is required."),
        RefusedRequest(path: "/image?url=http://evil.example/x.png", status: .forbidden,
                       spanish: "No se sirven imágenes de evil.example.", english: "Images from evil.example are not served."),
        RefusedRequest(form: [("action", "add")], path: "/favorites/dogs/rex", headers: [.origin: "http://evil.example"],
                       status: .forbidden,
                       spanish: "Este formulario se envió desde otro sitio (http://evil.example), así que se rechazó.",
                       english: "This form was sent from another site (http://evil.example), so it was refused."),
        RefusedRequest(path: "/rickandmorty/1", headers: [HTTPFields.Element.Name("Sec-Fetch-Site")!: "cross-site"], status: .forbidden,
                       spanish: "Las páginas, imágenes y API de Kiosk responden a las propias páginas de Kiosk",
                       english: "Kiosk's pages, pictures and API answer Kiosk's own pages"),
        RefusedRequest(form: [], path: "/dogs/rex/frobnicate", status: .notFound,
                       spanish: "No hay ningún formulario en esta dirección.", english: "There is no form at this address."),
        RefusedRequest(form: [("body", String(repeating: "x", count: 3 << 20))], path: "/favorites/dogs/rex", status: .contentTooLarge,
                       spanish: "Lo enviado ocupa más de lo que acepta esta dirección (como mucho 4 KB).",
                       english: "What was sent is larger than this address accepts (at most 4 KB)."),
        RefusedRequest(form: [("lang", "fr"), ("return", "/")], path: "/language", withToken: true, status: .badRequest,
                       spanish: "El idioma debe ser uno de: en, es.", english: "The language must be one of: en, es."),
    ]
}

@Suite("The reader's refusals in the browser's language")
struct ReaderRefusalLanguageTests {
    @Test("A malformed query, a picture address refused, a form from another site or to no form, too large or naming no language Kiosk speaks, is said in the page's language",
          arguments: RefusedRequest.all)
    func refusalsInTheReadersLanguage(request: RefusedRequest) async throws {
        try await withWeb { _, client in
            // Given the CSRF token of a page already read, for a form that gets past its check
            let token = try issuedToken(try await client.get("/dogs"))
            func send(_ language: String) async throws -> Fetched {
                var headers = request.headers
                headers[.acceptLanguage] = language
                guard let form = request.form else { return try await client.get(request.path, headers: headers) }
                return try await client.post(request.path, form: request.withToken ? [("csrf", token)] + form : form,
                                             cookie: request.withToken ? token : nil, headers: headers)
            }
            // When it is sent by a Spanish browser and by an English one
            let spanish = try await send("es")
            let english = try await send("en")
            // Then the Spanish page says it in Spanish, under a Spanish title, and the English page in English
            #expect(spanish.status == request.status && spanish.body.contains(HTML.text(request.spanish).rendered), "\(spanish.body)")
            let inEnglish = HTML.text(request.english).rendered
            #expect(spanish.body.contains("<html lang=\"es\"") && !spanish.body.contains(inEnglish), "\(spanish.body)")
            #expect(english.status == request.status && english.body.contains(inEnglish), "\(english.body)")
        }
    }

    @Test("A 413 page has the Spanish title a failure without one of its own has")
    func tooLargeTitled() async throws {
        try await withWeb { _, client in
            // When a Spanish browser posts more than a form may be
            let page = try await client.post("/favorites/dogs/rex", form: [("body", String(repeating: "x", count: 5000))],
                                             headers: [.acceptLanguage: "es"])
            // Then its title is Spanish too
            #expect(page.status == .contentTooLarge && page.body.contains("<h1>Algo salió mal</h1>"), "\(page.body)")
        }
    }

    @Test("The JSON API's refusals stay English whatever language the browser asks for",
          arguments: ["/api/rickandmorty?page=1&page=2", "/api/rickandmorty?q=%01", "/api/rickandmorty/1"])
    func apiStaysEnglish(path: String) async throws {
        try await withWeb { _, client in
            // Given a Spanish browser (a cross-site one for the item, which is refused)
            var headers: HTTPFields = [.acceptLanguage: "es"]
            if path == "/api/rickandmorty/1" { headers[HTTPFields.Element.Name("Sec-Fetch-Site")!] = "cross-site" }
            // When the API refuses its request
            let answer = try await client.get(path, headers: headers)
            // Then the error is in English, the JSON's one language
            let error = try #require(try answer.json()["error"] as? String, "\(answer.body)")
            #expect((400..<500).contains(answer.status.code))
            #expect(error.hasPrefix("The ") || error.hasPrefix("Kiosk's "), "\(error)")
            #expect(!error.contains("dirección") && !error.contains("Kiosk responden"), "\(error)")
        }
    }
}
