import Foundation
import KioskCore
import KioskSources
import Testing

@Suite("Sources factory and configuration")
struct SourcesTests {
    @Test("make builds one source per catalog, each answering to its own ID")
    func makeAll() {
        // Given any configuration
        let sources = Sources.make(testConfiguration())

        // Then every SourceID has its source
        #expect(Set(sources.keys) == Set(SourceID.allCases))
        for (id, source) in sources { #expect(source.id == id) }
    }

    @Test("the live configuration points at the public APIs and holds no keys and no dogs URL")
    func liveDefaults() {
        let live = SourceConfiguration.live

        #expect(live.nytBaseURL.absoluteString == "https://api.nytimes.com/svc/mostpopular/v2")
        #expect(live.marvelBaseURL.absoluteString == "https://gateway.marvel.com/v1/public")
        #expect(live.rickAndMortyBaseURL.absoluteString == "https://rickandmortyapi.com/api")
        #expect(live.dogsURL == nil)
        #expect(live.nytAPIKey == nil)
        #expect(live.marvelPublicKey == nil)
        #expect(live.marvelPrivateKey == nil)
    }

    @Test("with the live configuration only Rick and Morty can build a request; the others say what to set")
    func liveRequests() throws {
        // Given no keys and no dogs URL
        let sources = Sources.make(.live)

        // When each source builds its first page request
        func attempt(_ id: SourceID) -> KioskError? {
            do {
                _ = try sources[id]!.listRequest(for: PageRequest(source: id))
                return nil
            } catch let error as KioskError {
                return error
            } catch {
                return .invalidRequest("unexpected \(error)")
            }
        }

        // Then keyless requests are never built
        guard case .unauthorized(.nyt, let nytMessage)? = attempt(.nyt) else { Issue.record("NYT built a keyless request"); return }
        guard case .unauthorized(.marvel, let marvelMessage)? = attempt(.marvel) else { Issue.record("Marvel built a keyless request"); return }
        guard case .invalidRequest(let dogsMessage)? = attempt(.dogs) else { Issue.record("Dogs built a request without a URL"); return }
        #expect(nytMessage.contains("NYT_API_KEY"))
        #expect(marvelMessage.contains("MARVEL_PUBLIC_KEY") && marvelMessage.contains("MARVEL_PRIVATE_KEY"))
        #expect(dogsMessage.contains("KIOSK_DOGS_URL"))
        #expect(attempt(.rickandmorty) == nil)
    }

    @Test("a source refuses a request meant for another catalog")
    func wrongSource() {
        let sources = Sources.make(testConfiguration())
        for (id, source) in sources {
            let other = SourceID.allCases.first { $0 != id }!
            #expect(throws: KioskError.self) { try source.normalize(PageRequest(source: other)) }
        }
    }

    @Test("the sources are usable across tasks")
    func sendable() async throws {
        // Given the sources shared with concurrent tasks (they are Sendable values)
        let sources = Sources.make(testConfiguration())

        // When requests are built concurrently
        let urls = try await withThrowingTaskGroup(of: String.self) { group in
            for page in 1...5 {
                group.addTask { try sources[.rickandmorty]!.listRequest(for: PageRequest(source: .rickandmorty, page: page)).url.absoluteString }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }

        // Then each is built independently
        #expect(urls.count == 5)
    }
}
