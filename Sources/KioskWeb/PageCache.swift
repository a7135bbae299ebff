import Foundation
import Hummingbird
import KioskApp
import KioskCore
import Synchronization

/// Rendered list pages, served again without reading the store while nothing they show has changed.
/// Reading a page from SQLite and rendering 20 rows is nearly all the cost of serving it, and a page
/// is viewed many times between two changes. An entry is keyed by the address, the language and the
/// store's change token (which moves on any commit, from this process or another), and it is served
/// only while the age it shows and its staleness read the same as a fresh render would. The CSRF token
/// differs per browser, so a page is kept as bytes with the places its token goes, and each browser's
/// token is written in as the response is assembled: a hit builds no string at all.
final class PageCache: Sendable {
    /// What a page is kept under.
    struct Key: Hashable, Sendable {
        /// Path and query as requested.
        let path: String
        let language: Language
        /// The store's change token when the page was read.
        let changeToken: Int64
    }

    /// A page served from the cache.
    struct Hit {
        /// The page with the browser's token in its forms.
        let body: ByteBuffer
        /// What the page shows, for the request log.
        let request: PageRequest
        /// When its data was fetched and until when it is fresh (its Cache-Status `ttl`).
        let metadata: SnapshotMetadata
    }

    /// A marker no upstream string can contain: random per process.
    let tokenMarker = "\u{E000}csrf-\(UUID().uuidString)\u{E000}"
    private let capacity: Int
    private let state = Mutex<State>(State())

    private struct Entry {
        /// The page without its tokens.
        var page: ByteBuffer
        /// Where in `page` a token goes, ascending.
        var tokenOffsets: [Int]
        var request: PageRequest
        var metadata: SnapshotMetadata
        var ageShown: Age
        var isStale: Bool
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var clock: UInt64 = 0
    }

    /// At most `capacity` pages are kept; the least recently used goes first.
    init(capacity: Int = 64) { self.capacity = capacity }

    /// The key of a list page; nil when the store cannot say whether it changed (an in-memory store).
    static func key(path: String, language: Language, changeToken: Int64?) -> Key? {
        changeToken.map { Key(path: path, language: language, changeToken: $0) }
    }

    /// The cached page for `key` with `token` in its forms, if its data is still fresh at `now` and it shows
    /// the right age. A stale page is never served from here: rendering it anew starts its revalidation
    /// (an upstream's `no-cache` makes a page stale as soon as it is stored), which a hit would skip.
    func page(_ key: Key, token: String, now: Date) -> Hit? {
        let found = state.withLock { state -> Entry? in
            guard var entry = state.entries[key] else { return nil }
            guard Age(entry.metadata.age(at: now)) == entry.ageShown, !entry.isStale, entry.metadata.isFresh(at: now) else {
                state.entries[key] = nil
                return nil
            }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry
        }
        guard let found else { return nil }
        return Hit(body: Self.assemble(found.page, tokenOffsets: found.tokenOffsets, token: token), request: found.request,
                   metadata: found.metadata)
    }

    /// Renders the page for `context`, keeping it under `key` when it is a settled, fresh answer (no
    /// revalidation under way, no error to report) so later requests can be served from here. `render` is
    /// called once, with the context to render for (its token is the marker when the page is kept).
    func render(key: Key?, update: CatalogUpdate, request: PageRequest, context: ViewContext,
                render: (ViewContext) -> HTML) -> ByteBuffer {
        guard let key, !update.isRevalidating, update.error == nil, !update.isStale else {
            return ByteBuffer(string: render(context).rendered)
        }
        var marked = context
        marked.csrfToken = tokenMarker
        let (page, offsets) = Self.cut(render(marked).rendered, at: tokenMarker)
        let entry = Entry(page: page, tokenOffsets: offsets, request: request, metadata: update.metadata,
                          ageShown: Age(update.age), isStale: update.isStale, lastUse: 0)
        state.withLock { state in
            state.clock += 1
            var stored = entry
            stored.lastUse = state.clock
            state.entries[key] = stored
            if state.entries.count > capacity, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                state.entries[oldest] = nil
            }
        }
        return Self.assemble(page, tokenOffsets: offsets, token: context.csrfToken)
    }

    /// How many pages are kept (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// `rendered` as bytes without the markers, and where each marker was.
    private static func cut(_ rendered: String, at marker: String) -> (ByteBuffer, [Int]) {
        let bytes = Array(rendered.utf8), needle = Array(marker.utf8)
        var page = ByteBuffer()
        page.reserveCapacity(bytes.count)
        var offsets: [Int] = []
        var start = 0, index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0], bytes[index..<index + needle.count].elementsEqual(needle) {
                page.writeBytes(bytes[start..<index])
                offsets.append(page.writerIndex)
                index += needle.count
                start = index
            } else {
                index += 1
            }
        }
        page.writeBytes(bytes[start...])
        return (page, offsets)
    }

    /// The page with `token` written at each offset: one allocation and plain memory copies. (Slicing the
    /// shared page buffer instead retained and released its storage from every thread at once, twenty times
    /// a page, which cost more than the copying.)
    private static func assemble(_ page: ByteBuffer, tokenOffsets: [Int], token: String) -> ByteBuffer {
        var token = token
        let length = page.readableBytes + tokenOffsets.count * token.utf8.count
        var body = ByteBuffer()
        page.withUnsafeReadableBytes { page in
            token.withUTF8 { token in
                _ = body.writeWithUnsafeMutableBytes(minimumWritableBytes: length) { out in
                    var written = 0, from = 0
                    func copy(_ bytes: UnsafeRawBufferPointer) {
                        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
                        (out.baseAddress! + written).copyMemory(from: base, byteCount: bytes.count)
                        written += bytes.count
                    }
                    for offset in tokenOffsets {
                        copy(UnsafeRawBufferPointer(rebasing: page[from..<offset]))
                        copy(UnsafeRawBufferPointer(token))
                        from = offset
                    }
                    copy(UnsafeRawBufferPointer(rebasing: page[from...]))
                    return written
                }
            }
        }
        return body
    }
}
