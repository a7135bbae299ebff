public import Foundation
public import KioskCore

/// The dogs list: one JSON document at a configured URL, one page, searched locally.
public struct DogsSource: CatalogSource {
    private let url: URL?
    private let now: @Sendable () -> Date

    /// A source reading `configuration.dogsURL`; without one, requests fail with a message saying how to set it.
    public init(configuration: SourceConfiguration) {
        url = configuration.dogsURL
        now = configuration.now
    }

    /// Always `.dogs`.
    public var id: SourceID { .dogs }
    /// The whole list is one page; 20 is the page size the list is laid out for.
    public var pageSize: Int { 20 }
    /// An hour.
    public var defaultFreshness: TimeInterval { 3600 }

    public var endpoints: [EndpointDescription] {
        [EndpointDescription(
            name: "dogs.list", source: id, host: url.map(Self.hostAndPort) ?? "(not configured: KIOSK_DOGS_URL)",
            // Redacted: a mirror's URL may carry a token in its query.
            template: url.map { url in
                let full = url.redactedString, origin = "\(url.scheme ?? "https")://\(Self.hostAndPort(url))"
                return full.hasPrefix(origin) ? String(full.dropFirst(origin.count)) : full
            } ?? "",
            responseModel: ResponseModel("[{dogName, description, age, image}]", yields: .userEditedDogs),
            cachePolicy: EndpointDescription.freshness(defaultFreshness))]
    }
    /// The document has no search: searching means searching stored dogs.
    public var search: SearchBehaviour { SearchBehaviour(mode: .localOnly) }
    /// The one page; the document names no others.
    public var syncPlan: SyncPlan { SyncPlan(requests: [PageRequest(source: id)], followsTotalPages: false) }
    /// The user deletes and reorders dogs; the order survives refreshes.
    public var ordering: ItemOrdering { .user }
    /// Rows with an 80 px picture.
    public var presentation: SourcePresentation {
        SourcePresentation(
            icon: "🐶", thumbnailWidth: 80, thumbnailHeight: 80,
            names: ["en": "Dogs", "es": "Perros"], shortNames: ["en": "Dogs", "es": "Perros"],
            taglines: ["en": "A short list of good dogs, yours to reorder.",
                       "es": "Una lista corta de buenos perros, para ordenar a tu gusto."])
    }
    /// The document's host (the spec's allow-list; dog images on other hosts are not included).
    public var imageHosts: Set<String> { [] }
    /// The dogs document's origin.
    public var origins: Set<Origin> { Set([url.flatMap(Origin.init)].compactMap { $0 }) }
    /// None.
    public var filterValues: [String: [String]] { [:] }

    /// Rejects filters and any page but 1.
    public func normalize(_ request: PageRequest) throws -> PageRequest {
        try RequestValidation.checkBasics(request, source: id)
        try RequestValidation.requireSinglePage(request, description: "The dogs list is a single page")
        var normalized = request
        normalized.filters = try RequestValidation.normalizedFilters(request.filters, allowed: filterValues, source: id)
        return normalized
    }

    /// `GET {dogsURL}`; throws invalidRequest when no dogs URL is configured.
    public func listRequest(for request: PageRequest) throws -> HTTPRequest {
        _ = try normalize(request)
        guard let url else {
            throw KioskError.invalidRequest(
                "Set KIOSK_DOGS_URL to the dogs JSON document (a bare array of {dogName, description, age, image})"
            )
        }
        return try DogsEndpoints.list.request(relativeTo: url, source: id)
    }

    /// The dogs in document order with slug IDs; malformed dogs are skipped and reported under `[i]`.
    public func decodeList(_ response: HTTPResponse, for request: PageRequest) throws -> Page {
        let request = try normalize(request)
        try UpstreamStatus.check(response, source: id, now: now())
        let slots = try ResponseBody.decode([Tolerant<DogDTO>].self, from: response.body)
        let (dogs, issues) = ResponseBody.collect(slots, body: response.body)
        // Slugs are numbered over every entry of the document, readable or not, so that a skipped
        // "Rex" does not hand its id (and its deletions and favorites) to the next "Rex".
        var names = Array(repeating: "", count: slots.count)
        if !issues.isEmpty, let entries = (try? JSONSerialization.jsonObject(with: response.body)) as? [Any] {
            for (position, entry) in entries.enumerated() where position < names.count {
                names[position] = ((entry as? [String: Any])?["dogName"] as? String) ?? ""
            }
        }
        for dog in dogs { names[dog.position] = dog.value.dogName }
        let slugs = DogSlugs.assign(names)
        let items = dogs.map { dog in dog.value.toDomain(itemID: slugs[dog.position]) }
        return Page(request: request, items: items, totalItems: slots.count, totalPages: 1, skipped: issues)
    }

    /// Nil: the document has no item endpoint.
    public func detailRequest(itemID: String) throws -> HTTPRequest? { nil }

    /// Always throws: with no item endpoint there is no item response to read.
    public func decodeDetail(_ response: HTTPResponse, itemID: String) throws -> CatalogItem {
        throw KioskError.invalidRequest("The dogs list has no item endpoint; dog \(itemID) is read from the stored list")
    }
}

