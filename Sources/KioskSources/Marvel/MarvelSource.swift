public import Foundation
public import KioskCore

/// Marvel characters by name, 20 a page, searched upstream with `nameStartsWith`.
public struct MarvelSource: CatalogSource {
    private let baseURL: URL
    private let publicKey: String?
    private let privateKey: String?
    private let now: @Sendable () -> Date

    /// A source reading `configuration.marvelBaseURL`, signing with both Marvel keys and `configuration.now`.
    public init(configuration: SourceConfiguration) {
        baseURL = configuration.marvelBaseURL
        publicKey = configuration.marvelPublicKey
        privateKey = configuration.marvelPrivateKey
        now = configuration.now
    }

    /// Always `.marvel`.
    public var id: SourceID { .marvel }
    /// 20 characters a page.
    public var pageSize: Int { MarvelEndpoints.pageSize }
    /// A day: the character catalog changes rarely.
    public var defaultFreshness: TimeInterval { 86_400 }
    /// Searches go upstream as `nameStartsWith`.
    public var search: SearchBehaviour { SearchBehaviour(mode: .remote, debounce: .seconds(1)) }
    /// A grid of portrait covers, with the credit Marvel's terms require.
    public var presentation: SourcePresentation {
        SourcePresentation(
            icon: "🦸", layout: .grid, thumbnailWidth: 150, thumbnailHeight: 225,
            requiredAttribution: "Data provided by Marvel. © MARVEL",
            names: ["en": "Marvel", "es": "Marvel"], shortNames: ["en": "Marvel", "es": "Marvel"],
            taglines: ["en": "Characters, with their comics, series, stories and events.",
                       "es": "Personajes, con sus cómics, series, historias y eventos."])
    }
    /// The API host and Marvel's image CDN.
    public var imageHosts: Set<String> { ["i.annihil.us"] }
    /// The API's origin.
    public var origins: Set<Origin> { Set([Origin(baseURL)].compactMap { $0 }) }

    public var endpoints: [EndpointDescription] {
        let auth = "ts=<redacted>&apikey=<redacted>&hash=<redacted>"
        return [
            EndpointDescription(
                name: "marvel.characters", source: id, host: Self.hostAndPort(baseURL),
                template: baseURL.path + "/characters?limit=20&offset={(page-1)×20}&orderBy=name[&nameStartsWith={q}]&" + auth,
                responseModel: "{code, attributionText, etag, data: {offset, limit, total, count, results: [Character]}}",
                cachePolicy: EndpointDescription.freshness(defaultFreshness)),
            EndpointDescription(
                name: "marvel.character", source: id, host: Self.hostAndPort(baseURL),
                template: baseURL.path + "/characters/{id}?" + auth,
                responseModel: ResponseModel("{code, data: {results: [Character]}}", yields: .oneCharacter),
                cachePolicy: EndpointDescription.freshness(defaultFreshness), answer: .item),
        ]
    }
    /// None: Marvel characters have no filters in Kiosk.
    public var filterValues: [String: [String]] { [:] }

    /// A character's number without leading zeros.
    public func canonicalItemID(_ itemID: String) -> String { Self.withoutLeadingZeros(itemID) }

    /// Rejects pages below 1 and any filter.
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try RequestValidation.checkBasics(request, source: id)
        var normalized = request
        normalized.filters = try RequestValidation.normalizedFilters(request.filters, allowed: filterValues, source: id)
        return normalized
    }

    /// `GET {base}/characters?limit=20&offset=..&orderBy=name[&nameStartsWith=q]&ts&apikey&hash`.
    public func listRequest(for request: PageRequest) throws -> HTTPRequest {
        let request = try normalize(request)
        let auth = try auth()
        let endpoint = MarvelEndpoints.characters(page: request.page, nameStartsWith: request.query, auth: auth)
        return auth.marking(try endpoint.request(relativeTo: baseURL, source: id))
    }

    /// The page with the attribution; a page past the end is notFound, malformed characters are skipped.
    public func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page {
        let request = try normalize(request)
        try checkStatus(response)
        let envelope = try ResponseBody.decode(MarvelResponseDTO.self, from: response.body)
        let total = max(0, envelope.data.total)
        let totalPages = (total + pageSize - 1) / pageSize
        let offset = envelope.data.offset ?? (request.page - 1) * pageSize
        // Marvel answers 200 with no results past the end; saying so beats showing an empty page.
        if total > 0, offset >= total {
            throw KioskError.notFound("page \(request.page) of marvel (there are \(totalPages))")
        }
        let attribution = Self.attribution(envelope)
        let (characters, issues) = ResponseBody.collect(envelope.data.results, body: response.body)
        return Page(
            request: request,
            items: characters.map { $0.value.toDomain(attribution: attribution) },
            totalItems: total,
            totalPages: totalPages,
            skipped: issues,
            attribution: attribution
        )
    }

    /// `GET {base}/characters/{id}?ts&apikey&hash`; the ID must be numeric.
    public func detailRequest(itemID: String) throws -> HTTPRequest? {
        let characterID = try RequestValidation.numericID(itemID, what: "Marvel character")
        let auth = try auth()
        return auth.marking(try MarvelEndpoints.character(id: characterID, auth: auth).request(relativeTo: baseURL, source: id))
    }

    /// The character; 404 is notFound and a malformed character is a malformedResponse at its path.
    public func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem {
        if response.status == 404 { throw KioskError.notFound("marvel character \(itemID)") }
        try checkStatus(response)
        let envelope = try ResponseBody.decode(MarvelResponseDTO.self, from: response.body)
        guard let slot = envelope.data.results.first else { throw KioskError.notFound("marvel character \(itemID)") }
        switch slot.result {
        case .success(let character):
            return character.toDomain(attribution: Self.attribution(envelope))
        case .failure(let error):
            throw DecodingProblem(error, document: OrderedJSON.parseIfValid(response.body)).error
        }
    }

    /// Marvel's own statuses first (401 and 409 carry a message worth showing), then the common mapping.
    private func checkStatus(_ response: HTTPResponse) throws {
        switch response.status {
        case 401:
            throw KioskError.unauthorized(
                id,
                message: UpstreamStatus.message(in: response.body)
                    ?? "Marvel rejected the keys; check MARVEL_PUBLIC_KEY and MARVEL_PRIVATE_KEY"
            )
        case 409:
            throw KioskError.invalidRequest(
                UpstreamStatus.message(in: response.body) ?? "Marvel rejected the request parameters (HTTP 409)"
            )
        default:
            try UpstreamStatus.check(response, source: id, now: now())
        }
    }

    /// The request signed anew: a fresh `ts`, the public key and its `hash` (a logged one has expired anyway).
    public func signed(_ request: HTTPRequest) throws -> HTTPRequest {
        let auth = try auth()
        return auth.marking(
            try Replay.replacing(Dictionary(uniqueKeysWithValues: auth.queryItems.map { ($0.name, $0.value ?? "") }), in: request))
    }

    private func auth() throws -> MarvelAuth {
        guard let publicKey = RequestValidation.secret(publicKey),
              let privateKey = RequestValidation.secret(privateKey)
        else {
            throw KioskError.unauthorized(
                id,
                message: "Set MARVEL_PUBLIC_KEY and MARVEL_PRIVATE_KEY to read Marvel characters"
            )
        }
        return MarvelAuth(publicKey: publicKey, privateKey: privateKey, date: now())
    }

    private static func attribution(_ envelope: MarvelResponseDTO) -> String {
        let text = envelope.attributionText?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        return text.isEmpty ? "Data provided by Marvel. © MARVEL" : text
    }
}
