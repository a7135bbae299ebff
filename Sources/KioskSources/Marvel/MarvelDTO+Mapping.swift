import Foundation
import KioskCore

extension MarvelCharacterDTO {
    /// The catalog item, carrying the envelope's attribution as Marvel's terms require.
    func toDomain(attribution: String) -> CatalogItem {
        let image = thumbnail?.toDomain()
        let character = MarvelCharacter(
            thumbnail: image,
            modified: modified,
            comics: comics.toDomain(),
            series: series.toDomain(),
            stories: stories.toDomain(),
            events: events.toDomain(),
            links: urls.compactMap { link in link.url.map { MarvelCharacter.Link(type: link.type, url: $0) } },
            attribution: attribution
        )
        return CatalogItem(
            source: .marvel,
            itemID: String(id),
            title: name,
            subtitle: subtitle,
            summary: description.trimmingCharacters(in: .whitespacesAndNewlines),
            imageURL: image?.url(variant: "portrait_xlarge"),
            detail: .marvelCharacter(character)
        )
    }

    /// "12 comics · 3 series", zero parts omitted, "No comics" when there is nothing.
    var subtitle: String {
        var parts: [String] = []
        if comics.available > 0 { parts.append(comics.available == 1 ? "1 comic" : "\(comics.available) comics") }
        if series.available > 0 { parts.append("\(series.available) series") }
        return parts.isEmpty ? "No comics" : parts.joined(separator: " · ")
    }
}

extension MarvelThumbnailDTO {
    /// The image, or nil for Marvel's "image_not_available" placeholder (showing it would be showing nothing).
    func toDomain() -> MarvelImage? {
        var trimmedPath = path.trimmingCharacters(in: .whitespacesAndNewlines)
        while trimmedPath.hasSuffix("/") { trimmedPath.removeLast() }
        guard !trimmedPath.isEmpty, !trimmedPath.hasSuffix("image_not_available") else { return nil }
        return MarvelImage(path: trimmedPath, fileExtension: fileExtension)
    }
}

extension MarvelCollectionDTO {
    /// The domain collection: the upstream total and the names listed.
    func toDomain() -> MarvelCollection { MarvelCollection(available: available, items: names) }
}
