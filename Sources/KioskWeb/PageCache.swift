import Foundation
import KioskApp
import KioskCore
import Synchronization

/// Rendered list pages, reused while nothing they show has changed. Rendering a page of 20 rows is most
/// of the cost of serving it, and a cached page is served many times between two changes. The key holds
/// everything a page shows (data, freshness, age text, favorites, language, address), so a hit is always
/// the page a fresh render would give; only the per-browser CSRF token differs, so pages are stored
/// split at a marker and the token is put back on the way out.
final class PageCache: Sendable {
    /// A marker no upstream string can contain: random per process.
    let tokenMarker = "\u{E000}csrf-\(UUID().uuidString)\u{E000}"
    private let capacity: Int
    private let state = Mutex<State>(State())

    private struct State {
        var entries: [String: (chunks: [String], lastUse: UInt64)] = [:]
        var clock: UInt64 = 0
    }

    /// At most `capacity` pages are kept; the least recently used goes first.
    init(capacity: Int = 64) { self.capacity = capacity }

    /// The page for `key` with `token` in its forms, rendering it with `render` on a miss.
    func page(key: String, token: String, render: () -> HTML) -> String {
        let cached = state.withLock { state -> [String]? in
            state.clock += 1
            guard var entry = state.entries[key] else { return nil }
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.chunks
        }
        if let cached { return cached.joined(separator: token) }
        let rendered = CSRFProtection.$currentToken.withValue(tokenMarker) { render().rendered }
        let chunks = rendered.components(separatedBy: tokenMarker)
        state.withLock { state in
            state.clock += 1
            state.entries[key] = (chunks, state.clock)
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
        }
        return chunks.joined(separator: token)
    }

    /// How many pages are kept (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// The key of a list page: the address and language, what the update says about freshness (the
    /// age as shown), the favorites among its rows, and a fingerprint of the rows as they would render.
    static func listKey(path: String, language: Language, update: CatalogUpdate, favorites: Set<String>) -> String {
        var hasher = Hasher()
        for item in update.page.items {
            hasher.combine(item.itemID)
            hasher.combine(item.title)
            hasher.combine(item.subtitle)
            hasher.combine(item.summary)
            hasher.combine(item.imageURL)
            hasher.combine(favorites.contains(item.itemID))
        }
        hasher.combine(update.page.totalPages)
        hasher.combine(update.page.attribution)
        let freshness = [
            Localized.age(update.age, language: language), String(update.isStale), String(update.isRevalidating),
            update.error?.description ?? "",
        ].joined(separator: "|")
        return "\(language.rawValue) \(path) \(freshness) \(hasher.finalize())"
    }
}
