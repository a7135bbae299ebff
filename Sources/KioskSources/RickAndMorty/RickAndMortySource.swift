public import Foundation
public import KioskCore

/// Rick and Morty characters, 20 a page, searched upstream by name and filtered by status and gender.
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

    public var endpoints: [EndpointDescription] {
        [
            EndpointDescription(
                name: "rickandmorty.characters", source: id, host: Self.hostAndPort(baseURL),
                template: baseURL.path + "/character?page={page}[&name={q}][&status={status}][&gender={gender}]",
                responseModel: "{info: {count, pages, next, prev}, results: [Character]}",
                cachePolicy: EndpointDescription.freshness(defaultFreshness)),
            EndpointDescription(
                name: "rickandmorty.character", source: id, host: Self.hostAndPort(baseURL),
                template: baseURL.path + "/character/{id}", responseModel: "Character",
                cachePolicy: EndpointDescription.freshness(defaultFreshness), isList: false),
        ]
    }
    /// `status` (alive, dead, unknown) and `gender` (female, male, genderless, unknown).
    public var filterValues: [String: [String]] {
        ["status": ["alive", "dead", "unknown"], "gender": ["female", "male", "genderless", "unknown"]]
    }

    /// Lowercases `status` and `gender` and rejects other values, other filters and pages below 1.
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try RequestValidation.checkBasics(request, source: id)
        var normalized = request
        normalized.filters = try RequestValidation.normalizedFilters(request.filters, allowed: filterValues, source: id)
        return normalized
    }

    /// `GET {base}/character?page=N[&name=q][&status=..][&gender=..]`.
    public func listRequest(for request: PageRequest) throws -> HTTPRequest {
        let request = try normalize(request)
        let endpoint = RickAndMortyEndpoints.characters(
            page: request.page,
            name: request.query,
            status: request.filters["status"],
            gender: request.filters["gender"]
        )
        return try endpoint.request(relativeTo: baseURL, source: id)
    }

    /// The page; the API's "nothing here" 404 is an empty first page, or notFound for a later page.
    public func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page {
        let request = try normalize(request)
        if response.status == 404, let message = Self.nothingHereMessage(response.body) {
            // The API answers a search with no match this way: an empty result, not a failure.
            guard request.page == 1 else {
                throw KioskError.notFound("page \(request.page) of rickandmorty (\(message))")
            }
            return Page(request: request, items: [], totalItems: 0, totalPages: 0)
        }
        try UpstreamStatus.check(response, source: id, now: now())
        let envelope = try ResponseBody.decode(RickAndMortyResponseDTO.self, from: response.body)
        let (characters, issues) = ResponseBody.collect(envelope.results, body: response.body)
        return Page(
            request: request,
            items: characters.map { $0.value.toDomain() },
            totalItems: envelope.info.count,
            totalPages: envelope.info.pages,
            skipped: issues
        )
    }

    /// `GET {base}/character/{id}`; the ID must be numeric (the API would read "1,2" as a list).
    public func detailRequest(itemID: String) throws -> HTTPRequest? {
        let characterID = try RequestValidation.numericID(itemID, what: "Rick and Morty character")
        return try RickAndMortyEndpoints.character(id: characterID).request(relativeTo: baseURL, source: id)
    }

    /// The character (a bare object); 404 is notFound, a malformed one is a malformedResponse at its path.
    public func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem {
        if response.status == 404 { throw KioskError.notFound("rickandmorty character \(itemID)") }
        try UpstreamStatus.check(response, source: id, now: now())
        return try ResponseBody.decode(RickAndMortyCharacterDTO.self, from: response.body).toDomain()
    }

    /// The message of an API-shaped 404 body, or nil for any other 404 (a wrong base URL must not look empty).
    private static func nothingHereMessage(_ body: Data) -> String? {
        guard let error = try? JSONDecoder().decode(RickAndMortyErrorDTO.self, from: body) else { return nil }
        let message = error.error.trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? "there is nothing here" : message.prefix(1).lowercased() + message.dropFirst()
    }
}
