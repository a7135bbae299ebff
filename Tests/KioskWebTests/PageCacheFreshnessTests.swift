import Foundation
import KioskApp
import KioskCore
import Testing
@testable import KioskWeb

@Suite("Rendered-page cache: fresh pages only")
struct PageCacheFreshnessTests {
    @Test("A page rendered stale is never kept or served: rendering it anew starts its revalidation, which a hit would skip")
    func stalePagesAreNotKept() {
        // Given a page an upstream marked no-cache, renewed by a 304 and so stale as soon as it is stored
        let cache = PageCache()
        let metadata = SnapshotMetadata(fetchedAt: Date(timeIntervalSince1970: 0), freshUntil: Date(timeIntervalSince1970: 0))
        let update = CatalogUpdate(page: Page(request: PageRequest(source: .dogs), items: []), metadata: metadata, origin: .notModified,
                                   isStale: true, isRevalidating: false, error: nil, asOf: Date(timeIntervalSince1970: 1),
                                   cacheStatus: CacheStatus(.revalidated, forward: .stale, forwardStatus: 304, ttl: -1, stored: true))
        let context = ViewContext(language: .en, csrfToken: "t", path: "/dogs", catalogs: Catalogs(sources: []))
        let key = PageCache.Key(path: "/dogs", language: .en, changeToken: 1)
        // When it is rendered, and asked for again a second later (its age still reads "just now")
        let body = cache.render(key: key, update: update, request: PageRequest(source: .dogs), context: context) { _ in HTML.text("dogs") }
        // Then it was rendered, but not kept, so the next request renders it and revalidates
        #expect(String(buffer: body) == "dogs")
        #expect(cache.count == 0)
        #expect(cache.page(key, token: "t", now: Date(timeIntervalSince1970: 2)) == nil)
    }
}
