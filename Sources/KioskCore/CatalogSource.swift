public import Foundation

/// How a catalog searches: by asking its upstream, or only over what is stored.
public enum SearchMode: String, Codable, Sendable {
    /// The upstream has a search parameter (Marvel `nameStartsWith`, Rick and Morty `name`).
    case remote
    /// The upstream has none (NYT, dogs): search means searching stored items.
    case localOnly
}

/// One upstream API: how to ask it for pages and items, and how to read its answers.
/// Implementations live in KioskSources; their DTOs never leave that module.
public protocol CatalogSource: Sendable {
    /// Which catalog this is.
    var id: SourceID { get }
    /// Items per page.
    var pageSize: Int { get }
    /// How long a page stays fresh when the upstream sends no Cache-Control or Expires.
    var defaultFreshness: TimeInterval { get }
    /// Whether search goes upstream, how long typing waits before it, and from how many characters.
    var search: SearchBehaviour { get }
    /// What syncing the whole catalog asks for.
    var syncPlan: SyncPlan { get }
    /// Who orders the items: the upstream, the user, or a ranking.
    var ordering: ItemOrdering { get }
    /// How the catalog's lists look.
    var presentation: SourcePresentation { get }
    /// Public hosts (CDNs) this source's pictures come from, besides its own origins; the image route
    /// serves them, on http or https, when they resolve to public addresses.
    var imageHosts: Set<String> { get }
    /// The origins (scheme, host and port) of the configured upstream: the only places its catalog
    /// requests may go.
    var origins: Set<Origin> { get }
    /// The names of the filters this source accepts, with their allowed values.
    var filterValues: [String: [String]] { get }
    /// Whether a stored item belongs in a list with these (normalised) filters, for a search of the store, which the
    /// upstream's filters cannot reach; true for a filter the item does not tell (a ranking an article was listed in).
    func matches(_ item: CatalogItem, filters: [String: String]) -> Bool
    /// The filters `matches` reads from an item (a store search with none of them is its best page, read as such).
    var itemFilterNames: Set<String> { get }
    /// The id an item is stored and starred under, for an id as written in an address (`01` is character 1 where ids are
    /// numbers); the id itself where ids are names.
    func canonicalItemID(_ itemID: String) -> String
    /// The endpoints this source calls, for the network debugger's registry.
    var endpoints: [EndpointDescription] { get }
    /// A request rebuilt from the log (its secrets read `<redacted>`) with this source's current
    /// credentials put back, for replay; throws when a secret it needs is not configured.
    func signed(_ request: HTTPRequest) throws -> HTTPRequest

    /// Checks and normalises a request (defaults filled in); throws `KioskError.invalidRequest`.
    func normalize(_ request: PageRequest) throws -> PageRequest
    /// The upstream request for a page.
    func listRequest(for request: PageRequest) throws -> HTTPRequest
    /// Reads a page from an upstream response, skipping (and reporting) malformed items.
    func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page
    /// The upstream request for one item, or nil when the API has no item endpoint.
    func detailRequest(itemID: String) throws -> HTTPRequest?
    /// Reads one item from an upstream response.
    func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem

    /// Lists besides the catalog's own that a full sync may include (`PageRequest.collection`).
    var relatedCollections: [String] { get }
    /// What an item links to, in the order its detail shows them.
    func links(of item: CatalogItem) -> [ItemLink]
    /// The fewest upstream requests that fetch these linked items: one per kind, each naming several ids.
    func linkedItemsRequests(itemIDs: [String]) throws -> [HTTPRequest]
    /// Reads the items of such a request's answer, skipping (and reporting) malformed ones; ids the
    /// upstream does not know are simply absent.
    func decodeLinkedItems(_ response: HTTPResponse, for request: HTTPRequest) throws -> (items: [CatalogItem], skipped: [DecodingIssue])
}

extension CatalogSource {
    /// Default: no filters.
    public var filterValues: [String: [String]] { [:] }
    /// Default: every item (no filter an item tells).
    public func matches(_ item: CatalogItem, filters: [String: String]) -> Bool { true }
    /// Default: none.
    public var itemFilterNames: Set<String> { [] }
    /// Default: the id as written (a name's slug, `007`, is its own).
    public func canonicalItemID(_ itemID: String) -> String { itemID }

    /// `itemID` without the leading zeros of a number, for sources whose ids are numbers.
    public static func withoutLeadingZeros(_ itemID: String) -> String {
        guard itemID.count > 1, itemID.hasPrefix("0"), itemID.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return itemID }
        let trimmed = itemID.drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
    /// Default: page 1, then as many pages as its answer names.
    public var syncPlan: SyncPlan { SyncPlan(requests: [PageRequest(source: id)], followsTotalPages: true) }
    /// Default: the upstream's order.
    public var ordering: ItemOrdering { .upstream }
    /// Default: none.
    public var relatedCollections: [String] { [] }
    /// Default: items link to nothing.
    public func links(of item: CatalogItem) -> [ItemLink] { [] }
    /// Default: nothing to fetch.
    public func linkedItemsRequests(itemIDs: [String]) throws -> [HTTPRequest] { [] }
    /// Default: the source has no linked items.
    public func decodeLinkedItems(_ response: HTTPResponse, for request: HTTPRequest) throws -> (items: [CatalogItem], skipped: [DecodingIssue]) {
        throw KioskError.invalidRequest("\(id.rawValue) items link to nothing")
    }
    /// The position of the first item of `request`'s page in the whole catalog (0 for single-page catalogs).
    public func firstIndex(of request: PageRequest) -> Int {
        syncPlan.followsTotalPages ? (request.page - 1) * pageSize : 0
    }
}

/// One upstream endpoint as the network debugger's registry shows it: what is called, how, what comes
/// back and how long it is kept. Templates show secrets as `<redacted>`.
public struct EndpointDescription: Sendable, Hashable, Encodable {
    /// The stable name requests carry (`rickandmorty.characters`), which breakpoints and logs use.
    public var name: String
    public var source: SourceID?
    public var method: String
    /// The host (and port) called.
    public var host: String
    /// Path and query with `{placeholders}`: `/api/character?page={page}[&name={q}]`.
    public var template: String
    public var contentType: String
    /// What the body decodes to.
    public var responseModel: ResponseModel
    /// How its answers are kept (the console says it in the page's language).
    public var cachePolicy: EndpointCaching
    /// The request headers sent (redacted).
    public var headers: [String]
    /// What its answer is, which says how the source decodes it.
    public var answer: Answer
    /// The `PageRequest.collection` a page answer belongs to; nil for the catalog itself.
    public var collection: String?

    /// What an endpoint answers.
    public enum Answer: String, Sendable, Hashable, Codable {
        /// A page of a list (`decodeList`).
        case page
        /// One item (`decodeDetail`).
        case item
        /// Several items named by id (`decodeLinkedItems`).
        case items
    }

    public init(name: String, source: SourceID?, method: String = "GET", host: String, template: String,
                contentType: String = "application/json", responseModel: ResponseModel, cachePolicy: EndpointCaching,
                headers: [String] = ["Accept: application/json"], answer: Answer = .page, collection: String? = nil) {
        self.answer = answer
        self.collection = collection
        self.name = name
        self.source = source
        self.method = method
        self.host = host
        self.template = template
        self.contentType = contentType
        self.responseModel = responseModel
        self.cachePolicy = cachePolicy
        self.headers = headers
    }

    /// A page or item kept by the upstream's Cache-Control or Expires, else for a source's default lifetime.
    public static func freshness(_ seconds: TimeInterval) -> EndpointCaching {
        .freshness(hours: Int(seconds / 3600))
    }
}

/// How an endpoint's answers are kept, as data: each face words it in its own language.
public enum EndpointCaching: Sendable, Hashable, Encodable, CustomStringConvertible {
    /// Fresh for the upstream's Cache-Control or Expires, else this many hours; revalidated with ETag and Last-Modified.
    case freshness(hours: Int)
    /// Pictures: a memory cache, then a disk cache of this many MB (least recently used out first); ETag revalidated;
    /// else 7 days.
    case pictures(diskMegabytes: Int)

    /// In English: what the JSON API says (a string, as it always has) and the console's English page shows.
    public var description: String {
        switch self {
        case .freshness(let hours): "Cache-Control / Expires when sent, else \(hours) h; ETag and Last-Modified revalidated with 304"
        case .pictures(let megabytes): "memory cache, then a \(megabytes) MB disk cache (least recently used out first); ETag revalidated; else 7 days"
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// What an endpoint's body decodes to, as data: its shape (JSON keys and model names, the same in every language) and,
/// where the shape alone does not tell, what Kiosk makes of it, which each face words in its own language.
public struct ResponseModel: Sendable, Hashable, Encodable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The body's shape: `{info: {count, pages, next, prev}, results: [Character]}`; empty for a body that is not JSON.
    public var shape: String
    /// What Kiosk makes of the body, when the shape does not say it.
    public var yields: Yield?

    /// What Kiosk makes of a body.
    public enum Yield: Sendable, Hashable {
        /// A ranked list of this many articles.
        case rankedArticles(Int)
        /// One character.
        case oneCharacter
        /// With one id asked for, one such model rather than a list of one.
        case oneIDAnswersOne(String)
        /// The dogs list, the user's deletions and order kept over it.
        case userEditedDogs
        /// A picture's bytes.
        case rasterImage
    }

    /// A model of `shape` yielding `yields`.
    public init(_ shape: String, yields: Yield? = nil) {
        self.shape = shape
        self.yields = yields
    }

    /// A model that is its shape alone.
    public init(stringLiteral shape: String) {
        self.init(shape)
    }

    /// In English: what the JSON API says (a string, as it always has) and the console's English page shows.
    public var description: String { described { $0.english } }

    /// The shape and what it yields, the latter in words `words` gives.
    public func described(_ words: (Yield) -> String) -> String {
        guard let yields else { return shape }
        let said = words(yields)
        if shape.isEmpty { return said }
        if case .oneIDAnswersOne = yields { return "\(shape) (\(said))" }
        return "\(shape) → \(said)"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

extension ResponseModel.Yield {
    /// In English.
    public var english: String {
        switch self {
        case .rankedArticles(let count): "\(count) ranked articles"
        case .oneCharacter: "one character"
        case .oneIDAnswersOne(let model): "one id: \(model)"
        case .userEditedDogs: "the dogs list (your deletions and order kept)"
        case .rasterImage: "raster image bytes"
        }
    }
}

extension CatalogSource {
    /// Sources without credentials replay a request as it is.
    public func signed(_ request: HTTPRequest) throws -> HTTPRequest { request }
}
