public import Foundation
public import KioskCore

/// New York Times most popular articles: one ranked page of 20 per kind and period, searched locally.
public struct NYTimesSource: CatalogSource {
    /// Allowed `kind` values: the three most-popular rankings.
    static let kinds = ["emailed", "viewed", "shared"]
    /// Allowed `period` values, in days.
    static let periods = ["1", "7", "30"]

    private let baseURL: URL
    private let apiKey: String?
    private let now: @Sendable () -> Date

    /// A source reading `configuration.nytBaseURL` with `configuration.nytAPIKey`.
    public init(configuration: SourceConfiguration) {
        baseURL = configuration.nytBaseURL
        apiKey = configuration.nytAPIKey
        now = configuration.now
    }

    /// Always `.nyt`.
    public var id: SourceID { .nyt }
    /// NYT always returns 20 articles.
    public var pageSize: Int { 20 }
    /// An hour: the rankings move during the day.
    public var defaultFreshness: TimeInterval { 3600 }
    /// There is no search endpoint: searching means searching stored articles.
    public var search: SearchBehaviour { SearchBehaviour(mode: .localOnly) }
    /// One request per kind and period: each ranking is a single page.
    public var syncPlan: SyncPlan {
        SyncPlan(requests: Self.kinds.flatMap { kind in
            Self.periods.map { PageRequest(source: id, filters: ["kind": kind, "period": $0]) }
        }, followsTotalPages: false)
    }
    /// Articles are stored once and shared by the nine rankings: a rank is the position in the page shown.
    public var ordering: ItemOrdering { .ranked }
    /// Rows with a square thumbnail and the abstract.
    public var presentation: SourcePresentation {
        SourcePresentation(
            icon: "📰", thumbnailWidth: 75, thumbnailHeight: 75, showsSummary: true,
            names: ["en": "New York Times", "es": "New York Times"], shortNames: ["en": "News", "es": "Noticias"],
            taglines: ["en": "The most emailed, viewed and shared articles.",
                       "es": "Los artículos más enviados, vistos y compartidos."])
    }
    /// The API host and the NYT image CDN.
    public var imageHosts: Set<String> { ["static01.nyt.com"] }
    /// The API's origin.
    public var origins: Set<Origin> { Set([Origin(baseURL)].compactMap { $0 }) }
    /// `kind` (emailed, viewed, shared) and `period` (1, 7, 30 days).
    public var filterValues: [String: [String]] { ["kind": Self.kinds, "period": Self.periods] }

    public var endpoints: [EndpointDescription] {
        [EndpointDescription(
            name: "nyt.mostpopular", source: id, host: Self.hostAndPort(baseURL),
            template: baseURL.path + "/{kind}/{period}.json?api-key=<redacted>",
            responseModel: ResponseModel("Most Popular v2: {status, num_results, results: [Article]}", yields: .rankedArticles(20)),
            cachePolicy: EndpointDescription.freshness(defaultFreshness))]
    }

    /// Fills `kind=viewed` and `period=7` when absent; rejects other filters, other values and pages but 1.
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try RequestValidation.checkBasics(request, source: id)
        try RequestValidation.requireSinglePage(request, description: "NYT most popular has a single page of 20 articles")
        var normalized = request
        normalized.filters = try RequestValidation.normalizedFilters(
            request.filters,
            allowed: filterValues,
            defaults: ["kind": "viewed", "period": "7"],
            source: id
        )
        return normalized
    }

    /// The request with the configured `api-key`.
    public func signed(_ request: HTTPRequest) throws -> HTTPRequest {
        try Replay.replacing(["api-key": try requireKey()], in: request)
    }

    /// `GET {base}/{kind}/{period}.json?api-key=K`; the query stays local. Throws unauthorized without a key.
    public func listRequest(for request: PageRequest) throws -> HTTPRequest {
        let request = try normalize(request)
        let endpoint = NYTimesEndpoints.mostPopular(
            kind: request.filters["kind"] ?? "viewed",
            period: request.filters["period"] ?? "7",
            apiKey: try requireKey()
        )
        return try endpoint.request(relativeTo: baseURL, source: id)
    }

    /// The ranked page; malformed articles are skipped and reported under `results[i]`.
    public func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page {
        let request = try normalize(request)
        try UpstreamStatus.check(response, source: id, now: now())
        let envelope = try ResponseBody.decode(NYTimesResponseDTO.self, from: response.body)
        let (articles, issues) = ResponseBody.collect(envelope.results, body: response.body)
        return Page(
            request: request,
            items: articles.map { $0.value.toDomain(position: $0.position) },
            // The list is the 20 articles sent, ranked; num_results counts every article of the period.
            totalItems: articles.count,
            totalPages: 1,
            skipped: issues,
            reportedTotal: envelope.numResults.flatMap { $0 > envelope.results.count ? $0 : nil }
        )
    }

    /// Nil: NYT has no item endpoint, so the app shows the stored article.
    public func detailRequest(itemID: String) throws -> HTTPRequest? { nil }

    /// Always throws: with no item endpoint there is no item response to read.
    public func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem {
        throw KioskError.invalidRequest("NYT has no item endpoint; article \(itemID) is read from the stored ranking")
    }

    private func requireKey() throws -> String {
        guard let key = RequestValidation.secret(apiKey) else {
            throw KioskError.unauthorized(id, message: "Set NYT_API_KEY to read the New York Times most popular lists")
        }
        return key
    }
}
