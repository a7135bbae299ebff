import Foundation
import KioskApp
import KioskCore
import Synchronization

/// Rendered list pages, served again without reading the store while nothing they show has changed.
/// Reading a page from SQLite and rendering 20 rows is nearly all the cost of serving it, and a page
/// is viewed many times between two changes. An entry is keyed by the address, the language and the
/// store's change token (which moves on any commit, from this process or another), and it is served
/// only while the age it shows and its staleness read the same as a fresh render would. The CSRF token
/// differs per browser, so pages are stored split at a marker and each browser's token is put back.
final class PageCache: Sendable {
    /// A marker no upstream string can contain: random per process.
    let tokenMarker = "\u{E000}csrf-\(UUID().uuidString)\u{E000}"
    private let capacity: Int
    private let state = Mutex<State>(State())

    private struct Entry {
        var chunks: [String]
        var metadata: SnapshotMetadata
        var ageText: String
        var isStale: Bool
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var clock: UInt64 = 0
    }

    /// At most `capacity` pages are kept; the least recently used goes first.
    init(capacity: Int = 64) { self.capacity = capacity }

    /// The key of a list page; nil when the store cannot say whether it changed (an in-memory store).
    static func key(path: String, language: Language, changeToken: Int64?) -> String? {
        changeToken.map { "\(language.rawValue) \($0) \(path)" }
    }

    /// The cached page for `key` with `token` in its forms, if it still shows the right age and staleness at `now`.
    func page(key: String, token: String, now: Date, language: Language) -> String? {
        let chunks = state.withLock { state -> [String]? in
            guard var entry = state.entries[key] else { return nil }
            let age = entry.metadata.age(at: now)
            guard Localized.age(age, language: language) == entry.ageText, !entry.metadata.isFresh(at: now) == entry.isStale else {
                state.entries[key] = nil
                return nil
            }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.chunks
        }
        return chunks?.joined(separator: token)
    }

    /// Renders the page with `token` in its forms, keeping it under `key` when it is a settled answer
    /// (no revalidation under way, no error to report) so later requests can be served from here.
    func render(key: String?, update: CatalogUpdate, token: String, language: Language, render: () -> HTML) -> String {
        guard let key, !update.isRevalidating, update.error == nil else {
            return CSRFProtection.$currentToken.withValue(token) { render().rendered }
        }
        let rendered = CSRFProtection.$currentToken.withValue(tokenMarker) { render().rendered }
        let chunks = rendered.components(separatedBy: tokenMarker)
        let entry = Entry(chunks: chunks, metadata: update.metadata, ageText: Localized.age(update.age, language: language),
                          isStale: update.isStale, lastUse: 0)
        state.withLock { state in
            state.clock += 1
            var stored = entry
            stored.lastUse = state.clock
            state.entries[key] = stored
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
        }
        return chunks.joined(separator: token)
    }

    /// How many pages are kept (for tests).
    var count: Int { state.withLock { $0.entries.count } }
}
