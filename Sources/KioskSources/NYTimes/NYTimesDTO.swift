import Foundation

// The NYT Most Popular v2 response as it arrives. Decoded fields are the ones Kiosk shows;
// unknown fields (eta_id, views, email_count, nytdsection...) are ignored.

/// `{ status, copyright, num_results, results: [Article] }`.
struct NYTimesResponseDTO: Decodable {
    var numResults: Int?
    var results: [Tolerant<NYTimesArticleDTO>]

    enum CodingKeys: String, CodingKey {
        case numResults = "num_results"
        case results
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        numResults = try c.wholeNumberIfPresent(.numResults)
        results = try c.decode([Tolerant<NYTimesArticleDTO>].self, forKey: .results)
    }
}

/// One ranked article.
struct NYTimesArticleDTO: Decodable {
    /// May exceed Int32 (e.g. 100000009876543); Int is 64-bit on every platform Kiosk builds for.
    var id: Int
    var title: String
    var url: URL?
    var byline, abstract, publishedDate, updated, section, subsection, type, adxKeywords: String
    var desFacet, orgFacet, perFacet, geoFacet: [String]
    var media: [NYTimesMediaDTO]

    enum CodingKeys: String, CodingKey {
        case id, title, url, byline, abstract, updated, section, subsection, type, media
        case publishedDate = "published_date"
        case adxKeywords = "adx_keywords"
        case desFacet = "des_facet"
        case orgFacet = "org_facet"
        case perFacet = "per_facet"
        case geoFacet = "geo_facet"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        // id and title are what make an article; everything else has a harmless default.
        id = try c.wholeNumber(.id)
        title = try c.decode(String.self, forKey: .title)
        url = try c.optionalURL(.url)
        byline = try c.lenientString(.byline)
        abstract = try c.lenientString(.abstract)
        publishedDate = try c.lenientString(.publishedDate)
        updated = try c.lenientString(.updated)
        section = try c.lenientString(.section)
        subsection = try c.lenientString(.subsection)
        type = try c.lenientString(.type)
        adxKeywords = try c.lenientString(.adxKeywords)
        // Older responses send "" instead of [] for an empty facet.
        desFacet = try c.stringList(.desFacet)
        orgFacet = try c.stringList(.orgFacet)
        perFacet = try c.stringList(.perFacet)
        geoFacet = try c.stringList(.geoFacet)
        media = try c.lenientArray(.media)
    }
}

/// `{ type, subtype, caption, copyright, approved_for_syndication, "media-metadata": [...] }`.
struct NYTimesMediaDTO: Decodable {
    var type, caption, copyright: String
    /// Sent as 1 or true depending on the response's vintage.
    var approvedForSyndication: Bool
    var metadata: [NYTimesMediaMetadataDTO]

    enum CodingKeys: String, CodingKey {
        case type, caption, copyright
        case approvedForSyndication = "approved_for_syndication"
        case metadata = "media-metadata"
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.lenientString(.type)
        caption = try c.lenientString(.caption)
        copyright = try c.lenientString(.copyright)
        approvedForSyndication = try c.flexibleBool(.approvedForSyndication)
        metadata = try c.lenientArray(.metadata)
    }
}

/// `{ url, format, height, width }` — one rendition of an image.
struct NYTimesMediaMetadataDTO: Decodable {
    var url: URL?
    var format: String
    var width, height: Int?

    enum CodingKeys: String, CodingKey {
        case url, format, width, height
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        url = try c.optionalURL(.url)
        format = try c.lenientString(.format)
        width = try c.wholeNumberIfPresent(.width)
        height = try c.wholeNumberIfPresent(.height)
    }
}
