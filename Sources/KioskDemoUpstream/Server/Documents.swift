import KioskCore

/// The JSON documents of each API, shaped like the real ones (key order included).
///
/// Catalog records hold paths; `base` (`http://127.0.0.1:PORT`) makes them absolute here, because
/// clients must be able to follow every URL they receive back to this server.
enum Documents {
    // MARK: NYT

    static func nytList(kind: String, period: Int, shareType: String?, base: String) -> [UInt8] {
        let ranking = DemoCatalog.shared.nyt.ranking(kind: kind, period: period, shareType: shareType)
        let countKey = switch kind {
        case "emailed": "email_count"
        case "shared": "share_count"
        default: "views"
        }
        let results: [OrderedJSON] = ranking.map { entry in
            guard case .object(var members) = nytArticle(entry.article, base: base) else { return .null }
            members.append((countKey, .int(entry.count)))
            return .object(members)
        }
        return OrderedJSON.object([
            ("status", .string("OK")),
            ("copyright", .string(NYTCatalog.copyright)),
            ("num_results", .int(results.count)),
            ("results", .array(results)),
        ]).compactBytes
    }

    static func nytArticle(_ article: NYTArticle, base: String) -> OrderedJSON {
        func facet(_ values: [String]) -> OrderedJSON {
            values.isEmpty && article.emptyFacetsAsString ? .string("") : .strings(values)
        }
        let media: [OrderedJSON] = article.media.map { media in
            .object([
                ("type", .string("image")),
                ("subtype", .string("photo")),
                ("caption", .string(media.caption)),
                ("copyright", .string(media.copyright)),
                ("approved_for_syndication", media.approvedAsInteger ? .int(1) : .bool(true)),
                ("media-metadata", .array(NYTCatalog.imageFormats.map { format in
                    .object([
                        ("url", .string("\(base)\(media.directory)/\(media.baseName)-\(format.suffix).jpg")),
                        ("format", .string(format.format)),
                        ("height", .int(format.height)),
                        ("width", .int(format.width)),
                    ])
                })),
            ])
        }
        return .object([
            ("uri", .string(article.uri)),
            ("url", .string(base + article.webPath)),
            ("id", .int(article.id)),
            ("asset_id", .int(article.id)),
            ("source", .string("New York Times")),
            ("published_date", .string(article.publishedDate)),
            ("updated", .string(article.updated)),
            ("section", .string(article.section)),
            ("subsection", .string(article.subsection)),
            ("nytdsection", .string(article.nytdsection)),
            ("adx_keywords", .string(article.adxKeywords)),
            ("column", .null),
            ("byline", .string(article.byline)),
            ("type", .string(article.type)),
            ("title", .string(article.title)),
            ("abstract", .string(article.abstract)),
            ("des_facet", facet(article.desFacet)),
            ("org_facet", facet(article.orgFacet)),
            ("per_facet", facet(article.perFacet)),
            ("geo_facet", facet(article.geoFacet)),
            ("media", .array(media)),
            ("eta_id", .int(0)),
        ])
    }

    /// NYT's error body (Apigee fault format).
    static func nytFault(_ message: String, code: String) -> [UInt8] {
        OrderedJSON.object([
            ("fault", .object([
                ("faultstring", .string(message)),
                ("detail", .object([("errorcode", .string(code))])),
            ])),
        ]).compactBytes
    }

    // MARK: Marvel

    /// Marvel's envelope. Returns the body and the etag, which is computed over `data` alone and
    /// also sent as the `etag` field, as Marvel does.
    static func marvelEnvelope(offset: Int, limit: Int, total: Int, results: [MarvelCharacterRecord],
                               base: String) -> (body: [UInt8], etag: String) {
        let dataTree = OrderedJSON.object([
            ("offset", .int(offset)),
            ("limit", .int(limit)),
            ("total", .int(total)),
            ("count", .int(results.count)),
            ("results", .array(results.map { marvelCharacter($0, base: base) })),
        ])
        let etag = Hashing.entityTag(dataTree.compactBytes)
        let body = OrderedJSON.object([
            ("code", .int(200)),
            ("status", .string("Ok")),
            ("copyright", .string(MarvelCatalog.copyright)),
            ("attributionText", .string(MarvelCatalog.attributionText)),
            ("attributionHTML", .string(MarvelCatalog.attributionHTML)),
            ("etag", .string(etag)),
            ("data", dataTree),
        ]).compactBytes
        return (body, etag)
    }

    static func marvelCharacter(_ character: MarvelCharacterRecord, base: String) -> OrderedJSON {
        let resource = "\(base)/v1/public/characters/\(character.id)"
        func collection(_ collection: MarvelCollectionRecord) -> OrderedJSON {
            .object([
                ("available", .int(collection.available)),
                ("collectionURI", .string("\(resource)/\(collection.kind.rawValue)")),
                ("items", .array(collection.items.map { item in
                    var members: [(key: String, value: OrderedJSON)] = [
                        ("resourceURI", .string("\(base)/v1/public/\(collection.kind.rawValue)/\(item.id)")),
                        ("name", .string(item.name)),
                    ]
                    if let type = item.type { members.append(("type", .string(type))) }
                    return .object(members)
                })),
                ("returned", .int(collection.items.count)),
            ])
        }
        let slug = character.name.slug
        var urls: [OrderedJSON] = [
            .object([("type", .string("detail")), ("url", .string("\(base)/web/marvel/characters/\(character.id)/\(slug)"))]),
        ]
        if character.hasWiki {
            urls.append(.object([("type", .string("wiki")), ("url", .string("\(base)/web/marvel/universe/\(slug)"))]))
        }
        urls.append(.object([("type", .string("comiclink")), ("url", .string("\(base)/web/marvel/comics/characters/\(character.id)/\(slug)"))]))
        return .object([
            ("id", .int(character.id)),
            ("name", .string(character.name)),
            ("description", .string(character.description)),
            ("modified", .string(character.modified)),
            ("thumbnail", .object([
                ("path", .string(base + character.thumbnailPath)),
                ("extension", .string(character.thumbnailExtension)),
            ])),
            ("resourceURI", .string(resource)),
            ("comics", collection(character.comics)),
            ("series", collection(character.series)),
            ("stories", collection(character.stories)),
            ("events", collection(character.events)),
            ("urls", .array(urls)),
        ])
    }

    /// Marvel's error bodies: `{code: Int, status}` for request errors, `{code: String, message}` for auth.
    static func marvelStatus(_ code: Int, _ status: String) -> [UInt8] {
        OrderedJSON.object([("code", .int(code)), ("status", .string(status))]).compactBytes
    }

    static func marvelMessage(_ code: String, _ message: String) -> [UInt8] {
        OrderedJSON.object([("code", .string(code)), ("message", .string(message))]).compactBytes
    }

    // MARK: Rick and Morty

    static func rickAndMortyCharacter(_ character: RickAndMortyRecord, base: String) -> OrderedJSON {
        func place(_ id: Int?) -> OrderedJSON {
            guard let id, let name = RickAndMortyCatalog.locations[id] else {
                return .object([("name", .string("unknown")), ("url", .string(""))])
            }
            return .object([("name", .string(name)), ("url", .string("\(base)/api/location/\(id)"))])
        }
        return .object([
            ("id", .int(character.id)),
            ("name", .string(character.name)),
            ("status", .string(character.status)),
            ("species", .string(character.species)),
            ("type", .string(character.type)),
            ("gender", .string(character.gender)),
            ("origin", place(character.originID)),
            ("location", place(character.locationID)),
            ("image", .string("\(base)/api/character/avatar/\(character.id).jpeg")),
            ("episode", .strings(character.episodes.map { "\(base)/api/episode/\($0)" })),
            ("url", .string("\(base)/api/character/\(character.id)")),
            ("created", .string(character.created)),
        ])
    }

    static func rickAndMortyEpisode(_ episode: RickAndMortyEpisodeRecord, base: String) -> OrderedJSON {
        .object([
            ("id", .int(episode.id)),
            ("name", .string(episode.name)),
            ("air_date", .string(episode.airDate)),
            ("episode", .string(episode.code)),
            ("characters", .strings(episode.characters.map { "\(base)/api/character/\($0)" })),
            ("url", .string("\(base)/api/episode/\(episode.id)")),
            ("created", .string(episode.created)),
        ])
    }

    static func rickAndMortyLocation(_ location: RickAndMortyLocationRecord, base: String) -> OrderedJSON {
        .object([
            ("id", .int(location.id)),
            ("name", .string(location.name)),
            ("type", .string(location.type)),
            ("dimension", .string(location.dimension)),
            ("residents", .strings(location.residents.map { "\(base)/api/character/\($0)" })),
            ("url", .string("\(base)/api/location/\(location.id)")),
            ("created", .string(location.created)),
        ])
    }

    /// `{info, results}` for any of the API's three resources.
    static func rickAndMortyPage(count: Int, pages: Int, next: String?, previous: String?, results: [OrderedJSON]) -> [UInt8] {
        OrderedJSON.object([
            ("info", .object([
                ("count", .int(count)),
                ("pages", .int(pages)),
                ("next", .string(orNull: next)),
                ("prev", .string(orNull: previous)),
            ])),
            ("results", .array(results)),
        ]).compactBytes
    }

    static func rickAndMortyError(_ message: String) -> [UInt8] {
        OrderedJSON.object([("error", .string(message))]).compactBytes
    }

    // MARK: Dogs

    static func dogs(base: String) -> [UInt8] {
        OrderedJSON.array(DemoCatalog.shared.dogs.dogs.map { dog in
            .object([
                ("dogName", .string(dog.name)),
                ("description", .string(dog.description)),
                ("age", .int(dog.age)),
                ("image", .string(base + dog.imagePath)),
            ])
        }).compactBytes
    }
}
