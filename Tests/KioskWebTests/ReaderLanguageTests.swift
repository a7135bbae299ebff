import Foundation
import Hummingbird
import HummingbirdTesting
import KioskCore
import KioskTestSupport
import Testing
@testable import KioskWeb

@Suite("The reader in the browser's language")
struct ReaderLanguageTests {
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
            let dogs = try await client.get("/dogs", headers: headers).body
            #expect(dogs.contains("Casi ") && !dogs.contains("Almost "))
            let sheet = try await client.get("/rickandmorty/1", headers: headers).body
            #expect(sheet.contains("Humano") && sheet.contains("Masculino"))
        }
    }
}
