import Foundation

// What a catalog says about itself, so generic code (the catalog service, sync, search, the CLI's and the
// web app's lists) never asks which catalog it is. A fifth API still takes more than its folder in
// KioskSources: its `SourceID` case (name, spellings), a line in `Sources.make`, its address and keys in
// `SourceConfiguration`, `KioskConfiguration` (file and environment) and `UpstreamEndpoints`, and, when its
// items are of a new kind, a `CatalogItem.Detail` case with its stored form (`KioskStore/ItemPayload.swift`),
// its detail page (`KioskWeb/Pages+Detail.swift`) and its CLI rendering (`kiosk/Render.swift`).

/// What syncing a whole catalog asks for.
public struct SyncPlan: Sendable, Hashable {
    /// The pages known before asking anything (NYT: one per kind and period; others: page 1).
    public var requests: [PageRequest]
    /// Whether the first answer names how many pages there are (`totalPages`), the rest fetched after it.
    public var followsTotalPages: Bool

    /// A plan of `requests`, following the first answer's page count when `followsTotalPages`.
    public init(requests: [PageRequest], followsTotalPages: Bool) {
        self.requests = requests
        self.followsTotalPages = followsTotalPages
    }
}

/// Who orders a catalog's items.
public enum ItemOrdering: String, Sendable, Hashable, Codable {
    /// The upstream's order, page by page.
    case upstream
    /// The user's: items can be deleted and moved, the order survives refreshes, and an empty list is valid (dogs).
    case user
    /// The upstream's order is a ranking: an item's rank is its position in the page shown (NYT).
    case ranked
}

/// How a list of the catalog looks in a face.
public struct SourcePresentation: Sendable, Hashable {
    /// Rows, or a grid of portrait pictures.
    public enum Layout: String, Sendable, Hashable { case list, grid }

    /// A decorative emoji for tabs and headings (the label always says the same in words).
    public var icon: String
    /// Rows or a grid.
    public var layout: Layout
    /// The row picture's size in CSS pixels, matching the upstream's picture variant.
    public var thumbnailWidth: Int
    /// The row picture's height in CSS pixels.
    public var thumbnailHeight: Int
    /// Whether a row shows the item's summary under its title.
    public var showsSummary: Bool
    /// A credit the upstream's terms require wherever its data is shown, when the answer sends none.
    public var requiredAttribution: String?
    /// The catalog's name by language code (`en`, `es`); `en` is the fallback.
    public var names: [String: String]
    /// A shorter name for tabs, by language code.
    public var shortNames: [String: String]
    /// One sentence saying what the catalog holds, by language code.
    public var taglines: [String: String]
    /// The language the upstream writes its items in (a BCP 47 code): a page in another language marks their text
    /// with it, so a screen reader reads an English title in English on a Spanish page.
    public var contentLanguage: String

    /// A presentation; `names`, `shortNames` and `taglines` need at least an `en` entry.
    public init(icon: String, layout: Layout = .list, thumbnailWidth: Int, thumbnailHeight: Int, showsSummary: Bool = false,
                requiredAttribution: String? = nil, names: [String: String], shortNames: [String: String],
                taglines: [String: String], contentLanguage: String = "en") {
        self.icon = icon
        self.layout = layout
        self.thumbnailWidth = thumbnailWidth
        self.thumbnailHeight = thumbnailHeight
        self.showsSummary = showsSummary
        self.requiredAttribution = requiredAttribution
        self.names = names
        self.shortNames = shortNames
        self.taglines = taglines
        self.contentLanguage = contentLanguage
    }

    /// The name in `language`, else English.
    public func name(language: String) -> String { names[language] ?? names["en"] ?? "" }

    /// The tab name in `language`, else English.
    public func shortName(language: String) -> String { shortNames[language] ?? shortNames["en"] ?? name(language: language) }

    /// The tagline in `language`, else English.
    public func tagline(language: String) -> String { taglines[language] ?? taglines["en"] ?? "" }
}

/// How a catalog searches as the user types.
public struct SearchBehaviour: Sendable, Hashable {
    /// Whether search goes upstream or over stored items only.
    public var mode: SearchMode
    /// How long to wait after the last keystroke before searching (Marvel's rate limit wants longer).
    public var debounce: Duration
    /// Shorter queries search the store only, even where the upstream can search.
    public var minimumRemoteLength: Int

    /// A behaviour; 3 characters is the shortest query worth an upstream request.
    public init(mode: SearchMode, debounce: Duration = .milliseconds(500), minimumRemoteLength: Int = 3) {
        self.mode = mode
        self.debounce = debounce
        self.minimumRemoteLength = minimumRemoteLength
    }

    /// Whether `query` (already trimmed) goes upstream.
    public func isRemote(_ query: String) -> Bool { mode == .remote && query.count >= minimumRemoteLength }
}
