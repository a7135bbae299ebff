public import Foundation
public import KioskCore

/// Rick and Morty characters, 20 a page, searched upstream by name and filtered by status and gender, with
/// the episodes and locations they link to.
public struct RickAndMortySource: CatalogSource {
    private let baseURL: URL
    private let now: @Sendable () -> Date

    /// A source reading `configuration.rickAndMortyBaseURL` (the API needs no key).
    public init(configuration: SourceConfiguration) {
        baseURL = configuration.rickAndMortyBaseURL
        now = configuration.now
    }

    /// Always `.rickandmorty`.
    public var id: SourceID { .rickandmorty }
    /// 20 characters a page.
    public var pageSize: Int { 20 }
    /// A day: the catalog changes rarely.
    public var defaultFreshness: TimeInterval { 86_400 }
    /// Searches go upstream as `name`.
    public var search: SearchBehaviour { SearchBehaviour(mode: .remote) }
    /// Rows of round-ish 64 px portraits.
    public var presentation: SourcePresentation {
        SourcePresentation(
            icon: "🛸", thumbnailWidth: 64, thumbnailHeight: 64,
            names: ["en": "Rick and Morty", "es": "Rick and Morty"], shortNames: ["en": "Rick & Morty", "es": "Rick & Morty"],
            taglines: ["en": "Every character of the show, by status and gender.",
                       "es": "Todos los personajes de la serie, por estado y género."])
    }
    /// The API host, which also serves the character images.
    public var imageHosts: Set<String> { ["rickandmortyapi.com"] }
    /// The API's origin.
    public var origins: Set<Origin> { Set([Origin(baseURL)].compactMap { $0 }) }

    /// Each resource's pages, one item, and several items by id.
    public var endpoints: [EndpointDescription] {
        let host = Self.hostAndPort(baseURL), base = baseURL.path, freshness = EndpointDescription.freshness(defaultFreshness)
        return RickAndMortyEndpoints.Resource.allCases.flatMap { resource -> [EndpointDescription] in
            let path = base + "/" + resource.rawValue
            let model = resource.rawValue.prefix(1).uppercased() + resource.rawValue.dropFirst()
            let filters = resource == .character ? "[&name={q}][&status={status}][&gender={gender}]" : "[&name={q}]"
            return [
                EndpointDescription(name: resource.listName, source: id, host: host, template: path + "?page={page}" + filters,
                                    responseModel: ResponseModel("{info: {count, pages, next, prev}, results: [\(model)]}"),
                                    cachePolicy: freshness, collection: resource.collection),
                EndpointDescription(name: resource.itemName, source: id, host: host, template: path + "/{id}",
                                    responseModel: ResponseModel(model), cachePolicy: freshness, answer: .item),
                EndpointDescription(name: resource.itemsName, source: id, host: host, template: path + "/{id},{id},...",
                                    responseModel: ResponseModel("[\(model)]", yields: .oneIDAnswersOne(model)), cachePolicy: freshness, answer: .items),
            ]
        }
    }
    /// `status` (alive, dead, unknown) and `gender` (female, male, genderless, unknown).
    public var filterValues: [String: [String]] {
        ["status": ["alive", "dead", "unknown"], "gender": ["female", "male", "genderless", "unknown"]]
    }

    /// A character whose status and gender are those asked (as the API compares them, whatever the case); an episode or a
    /// place, which the character filters leave out upstream, only when none is asked.
    public var itemFilterNames: Set<String> { Set(filterValues.keys) }

    /// A character's number without leading zeros (episodes and places, `episode-3`, are names).
    public func canonicalItemID(_ itemID: String) -> String { Self.withoutLeadingZeros(itemID) }

    public func matches(_ item: CatalogItem, filters: [String: String]) -> Bool {
        let asked = filters.filter { filterValues[$0.key] != nil }
        guard !asked.isEmpty else { return true }
        guard case .rickAndMorty(let character) = item.detail else { return false }
        return asked.allSatisfy { key, value in
            (key == "status" ? character.status : character.gender).lowercased() == value
        }
    }

    /// The episodes (51 in 3 pages) and locations (126 in 7 pages), which `kiosk sync --related` fetches too.
    public var relatedCollections: [String] { ["episode", "location"] }

    /// Lowercases `status` and `gender` and rejects other values, other filters and pages below 1; the
    /// episode and location lists take no filter.
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try RequestValidation.checkBasics(request, source: id)
        guard let resource = RickAndMortyEndpoints.Resource(collection: request.collection) else {
            throw KioskError.invalidRequest("rickandmorty has no list \"\(request.collection ?? "")\"; "
                                            + "lists: characters, \(relatedCollections.joined(separator: ", "))")
        }
        var normalized = request
        normalized.filters = try RequestValidation.normalizedFilters(
            request.filters, allowed: resource == .character ? filterValues : [:], source: id)
        return normalized
    }

    /// `GET {base}/{character|episode|location}?page=N[&name=q][&status=..][&gender=..]`.
    public func listRequest(for request: PageRequest) throws -> HTTPRequest {
        let request = try normalize(request)
        let resource = RickAndMortyEndpoints.Resource(collection: request.collection) ?? .character
        let endpoint = RickAndMortyEndpoints.list(resource, page: request.page, name: request.query, filters: request.filters)
        return try endpoint.request(relativeTo: baseURL, source: id)
    }

    /// The page; the API's "nothing here" 404 to a search or a filter is an empty first page, or notFound for a later
    /// page. To the whole list it is a failure like any other 404 (the API says so of a route it does not have, a wrong
    /// base URL): an empty page stored in its place would wipe what is kept to read offline.
    public func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page {
        let request = try normalize(request)
        let narrowed = !(request.query ?? "").isEmpty || !request.filters.isEmpty
        if response.status == 404, narrowed || request.page > 1, let message = Self.nothingHereMessage(response.body) {
            // The API answers a search with no match this way: an empty result, not a failure.
            guard request.page == 1 else {
                throw KioskError.notFound("page \(request.page) of rickandmorty (\(message))")
            }
            return Page(request: request, items: [], totalItems: 0, totalPages: 0)
        }
        try UpstreamStatus.check(response, source: id, now: now())
        func page<Item: Decodable>(_ type: Item.Type, _ toDomain: (Item) -> CatalogItem) throws -> Page {
            let envelope = try ResponseBody.decode(RickAndMortyResponseDTO<Item>.self, from: response.body)
            let (items, issues) = ResponseBody.collect(envelope.results, body: response.body)
            return Page(request: request, items: items.map { toDomain($0.value) }, totalItems: envelope.info.count,
                        totalPages: envelope.info.pages, skipped: issues)
        }
        switch RickAndMortyEndpoints.Resource(collection: request.collection) ?? .character {
        case .character: return try page(RickAndMortyCharacterDTO.self) { $0.toDomain() }
        case .episode: return try page(RickAndMortyEpisodeDTO.self) { $0.toDomain() }
        case .location: return try page(RickAndMortyLocationDTO.self) { $0.toDomain() }
        }
    }

    /// `GET {base}/character/{id}`, `/episode/{id}` for `episode-N`, `/location/{id}` for `location-N`.
    public func detailRequest(itemID: String) throws -> HTTPRequest? {
        guard let (resource, number) = RickAndMortyIDs.parse(itemID.trimmingCharacters(in: .whitespaces)) else {
            throw KioskError.invalidRequest("Rick and Morty ids are numbers (characters), episode-N or location-N; "
                                            + "got \"\(itemID)\"")
        }
        return try RickAndMortyEndpoints.item(resource, id: String(number)).request(relativeTo: baseURL, source: id)
    }

    /// The character, episode or location (a bare object); 404 is notFound, a malformed one a
    /// malformedResponse at its path.
    public func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem {
        let resource = RickAndMortyIDs.parse(itemID)?.resource ?? .character
        if response.status == 404 { throw KioskError.notFound("rickandmorty \(resource.rawValue) \(itemID)") }
        try UpstreamStatus.check(response, source: id, now: now())
        switch resource {
        case .character: return try ResponseBody.decode(RickAndMortyCharacterDTO.self, from: response.body).toDomain()
        case .episode: return try ResponseBody.decode(RickAndMortyEpisodeDTO.self, from: response.body).toDomain()
        case .location: return try ResponseBody.decode(RickAndMortyLocationDTO.self, from: response.body).toDomain()
        }
    }

    /// A character's episodes (in the order the API lists them, which is airing order), origin and last
    /// location; a location's residents; an episode's characters. URLs that name no id are left out.
    public func links(of item: CatalogItem) -> [ItemLink] {
        var links: [ItemLink] = []
        var seen = Set<ItemLink>()
        func add(_ role: ItemLink.Role, _ url: URL?, _ resource: RickAndMortyEndpoints.Resource) {
            guard let url, let itemID = RickAndMortyIDs.itemID(linkedBy: url, as: resource) else { return }
            let link = ItemLink(role: role, itemID: itemID)
            if seen.insert(link).inserted { links.append(link) }
        }
        switch item.detail {
        case .rickAndMorty(let character):
            // The API numbers episodes in airing order; sorting by number keeps that order whatever the list's.
            let episodes = character.episodes.compactMap { url in
                RickAndMortyIDs.itemID(linkedBy: url, as: .episode).flatMap(RickAndMortyIDs.parse).map { (url, $0.id) }
            }
            for (url, _) in episodes.sorted(by: { $0.1 < $1.1 }) { add(.episode, url, .episode) }
            add(.origin, character.origin.url, .location)
            add(.location, character.location.url, .location)
        case .rickAndMortyEpisode(let episode):
            for url in episode.characters { add(.character, url, .character) }
        case .rickAndMortyLocation(let location):
            for url in location.residents { add(.resident, url, .character) }
        default:
            break
        }
        return links
    }

    /// One `/{resource}/{id},{id},...` request per resource (and per 100 ids, to keep URLs short), asked
    /// of the configured base URL whatever host the data's URLs name.
    public func linkedItemsRequests(itemIDs: [String]) throws -> [HTTPRequest] {
        var byResource: [RickAndMortyEndpoints.Resource: Set<Int>] = [:]
        for itemID in itemIDs {
            guard let (resource, number) = RickAndMortyIDs.parse(itemID) else {
                throw KioskError.invalidRequest("\"\(itemID)\" names no Rick and Morty character, episode or location")
            }
            byResource[resource, default: []].insert(number)
        }
        return try RickAndMortyEndpoints.Resource.allCases.flatMap { resource -> [HTTPRequest] in
            let ids = (byResource[resource] ?? []).sorted()
            return try stride(from: 0, to: ids.count, by: Self.idsPerRequest).map { start in
                let chunk = Array(ids[start..<min(start + Self.idsPerRequest, ids.count)])
                return try RickAndMortyEndpoints.items(resource, ids: chunk).request(relativeTo: baseURL, source: id)
            }
        }
    }

    /// How many ids one request names: 100 keeps the URL under 600 bytes.
    static let idsPerRequest = 100

    /// The items of an id-list answer: an array, or a bare object for one id. A 404 "not found" means
    /// none of the ids exists (an empty answer); one unreadable item is skipped with its JSON path.
    public func decodeLinkedItems(_ response: HTTPResponse, for request: HTTPRequest) throws
        -> (items: [CatalogItem], skipped: [DecodingIssue]) {
        guard let resource = RickAndMortyEndpoints.Resource.allCases.first(where: { $0.itemsName == request.endpoint }) else {
            throw KioskError.invalidRequest("\(request.endpoint) does not answer Rick and Morty items by id")
        }
        if response.status == 404, Self.nothingHereMessage(response.body) != nil { return ([], []) }
        try UpstreamStatus.check(response, source: id, now: now())
        func items<Item: Decodable>(_ type: Item.Type, _ toDomain: (Item) -> CatalogItem) throws
            -> (items: [CatalogItem], skipped: [DecodingIssue]) {
            let answer = try ResponseBody.decode(RickAndMortyByIDsDTO<Item>.self, from: response.body)
            let (values, issues) = ResponseBody.collect(answer.items, body: response.body)
            return (values.map { toDomain($0.value) }, issues)
        }
        switch resource {
        case .character: return try items(RickAndMortyCharacterDTO.self) { $0.toDomain() }
        case .episode: return try items(RickAndMortyEpisodeDTO.self) { $0.toDomain() }
        case .location: return try items(RickAndMortyLocationDTO.self) { $0.toDomain() }
        }
    }

    /// The message of an API-shaped 404 body, or nil for any other 404 (a wrong base URL must not look empty).
    private static func nothingHereMessage(_ body: Data) -> String? {
        guard let error = try? JSONDecoder().decode(RickAndMortyErrorDTO.self, from: body) else { return nil }
        let message = error.error.trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? "there is nothing here" : message.prefix(1).lowercased() + message.dropFirst()
    }
}
