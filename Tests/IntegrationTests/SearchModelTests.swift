import Foundation
import KioskApp
import KioskCore
import KioskTestSupport
import Synchronization
import Testing

/// Records every search the model sends.
final class SearchLog: Sendable {
    private let queries = Mutex<[String]>([])
    var all: [String] { queries.withLock { $0 } }
    func search(_ query: String) async throws -> SearchResult {
        queries.withLock { $0.append(query) }
        try Task.checkCancellation()
        let item = CatalogItem(source: .rickandmorty, itemID: "1", title: "Result for \(query)", subtitle: "", summary: "",
                               imageURL: nil, detail: .dog(Dog(name: query, description: "", age: 1, image: nil)))
        return SearchResult(query: query, items: [item], origin: .upstream, error: nil)
    }
}

func item(_ title: String) -> CatalogItem {
    CatalogItem(source: .dogs, itemID: title.lowercased(), title: title, subtitle: "", summary: "", imageURL: nil,
                detail: .dog(Dog(name: title, description: "", age: 3, image: nil)))
}

@Suite("Debounced search model on a test clock")
struct SearchModelTests {
    @Test("Typing fast sends one search, for the last text, after the 500 ms debounce")
    func typingFastSendsOneSearch() async throws {
        // Given a model on a manual clock
        let clock = ManualClock()
        let log = SearchLog()
        let model = SearchModel(clock: clock, search: log.search)

        // When "ric", "rick", "rick s" are typed 100 ms apart
        for text in ["ric", "rick", "rick s"] {
            await model.queryChanged(text)
            await clock.advance(by: .milliseconds(100))
        }
        // Then nothing is sent before 500 ms of quiet
        #expect(log.all.isEmpty)
        await clock.advance(by: .milliseconds(400))
        await model.settle()

        // And exactly one search is sent, for the latest text
        #expect(log.all == ["rick s"])
        let state = await model.state
        #expect(state.query == "rick s")
        #expect(state.items.first?.title == "Result for rick s")
        #expect(!state.isSearching)
    }

    @Test("The debounce is configurable: at 1 s nothing is sent after 500 ms")
    func configurableDebounce() async throws {
        let clock = ManualClock()
        let log = SearchLog()
        let model = SearchModel(debounce: SearchModel.debounceInterval(for: .marvel), clock: clock, search: log.search)
        await model.queryChanged("spider")
        await clock.advance(by: .milliseconds(500))
        #expect(log.all.isEmpty)
        await clock.advance(by: .milliseconds(500))
        await model.settle()
        #expect(log.all == ["spider"])
    }

    @Test("Under 3 characters filters the shown items at once and never queries the source")
    func shortQueriesFilterLocally() async throws {
        let clock = ManualClock()
        let log = SearchLog()
        let model = SearchModel(clock: clock, search: log.search)
        await model.setShownItems([item("Rex"), item("Bella"), item("Rocky")])
        await model.queryChanged("r")
        #expect(await model.state.items.map(\.title) == ["Rex", "Rocky"])
        await model.queryChanged("be")
        #expect(await model.state.items.map(\.title) == ["Bella"])
        await clock.advance(by: .seconds(5))
        #expect(log.all.isEmpty)
        await model.queryChanged("")
        #expect(await model.state.items.count == 3)
    }

    @Test("A newer query cancels an older one still waiting, and a stale answer is never shown")
    func newerQueryCancelsOlder() async throws {
        let clock = ManualClock()
        let log = SearchLog()
        let model = SearchModel(clock: clock, search: log.search)
        await model.queryChanged("morty")
        await clock.advance(by: .milliseconds(499))
        await model.queryChanged("summer")
        await clock.advance(by: .milliseconds(499))
        #expect(log.all.isEmpty)
        await clock.advance(by: .milliseconds(1))
        await model.settle()
        #expect(log.all == ["summer"])
        #expect(await model.state.query == "summer")
    }
}
