import Foundation
import KioskCore

extension RickAndMortyCharacterDTO {
    /// The catalog item: "Alive · Human" and "Human from Earth (C-137), last seen at Citadel of Ricks".
    func toDomain() -> CatalogItem {
        CatalogItem(
            source: .rickandmorty,
            itemID: String(id),
            title: name,
            subtitle: subtitle,
            summary: summary,
            imageURL: image,
            detail: .rickAndMorty(RickAndMortyCharacter(
                status: status,
                species: species,
                type: type,
                gender: gender,
                origin: origin.toDomain(),
                location: location.toDomain(),
                episodes: episode.compactMap { URL(string: $0) },
                created: created
            ))
        )
    }

    /// Status and species; an unknown status says so in words rather than showing a bare "unknown".
    var subtitle: String {
        let statusText = Self.isKnown(status) ? status : "Status unknown"
        let speciesText = Self.isKnown(species) ? species : nil
        return [statusText, speciesText].compactMap { $0 }.joined(separator: " · ")
    }

    /// A sentence from species, origin and last location, leaving out whatever the API does not know.
    var summary: String {
        var subject = Self.isKnown(species) ? species : ""
        if !subject.isEmpty, Self.isKnown(type) { subject += " (\(type))" }
        var sentence = subject
        if Self.isKnown(origin.name) {
            sentence += sentence.isEmpty ? "From \(origin.name)" : " from \(origin.name)"
        }
        if Self.isKnown(location.name) {
            sentence += sentence.isEmpty ? "Last seen at \(location.name)" : ", last seen at \(location.name)"
        }
        return sentence
    }

    private static func isKnown(_ text: String) -> Bool {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return !trimmed.isEmpty && trimmed.lowercased() != "unknown"
    }
}

extension RickAndMortyPlaceDTO {
    /// The place, with the API's "" URL for unlinked places turned into nil.
    func toDomain() -> RickAndMortyCharacter.Place {
        let link = url.trimmingCharacters(in: .whitespacesAndNewlines)
        return RickAndMortyCharacter.Place(name: name, url: link.isEmpty ? nil : URL(string: link))
    }
}

extension RickAndMortyEpisodeDTO {
    /// The episode as an item `episode-N`: "S01E01 · December 2, 2013" under its name.
    func toDomain() -> CatalogItem {
        CatalogItem(
            source: .rickandmorty, itemID: RickAndMortyIDs.itemID(.episode, id), title: name,
            subtitle: [code, airDate].filter { !$0.isEmpty }.joined(separator: " · "), summary: "", imageURL: nil,
            detail: .rickAndMortyEpisode(RickAndMortyEpisode(
                code: code, airDate: airDate, characters: characters.compactMap { URL(string: $0) }, created: created)))
    }
}

extension RickAndMortyLocationDTO {
    /// The location as an item `location-N`: "Planet · Dimension C-137" under its name.
    func toDomain() -> CatalogItem {
        let location = RickAndMortyLocation(type: type, dimension: dimension,
                                            residents: residents.compactMap { URL(string: $0) }, created: created)
        return CatalogItem(source: .rickandmorty, itemID: RickAndMortyIDs.itemID(.location, id), title: name,
                           subtitle: location.typeAndDimension, summary: "", imageURL: nil,
                           detail: .rickAndMortyLocation(location))
    }
}

/// Item ids of the three resources, kept apart in one catalog: characters are `N`, episodes
/// `episode-N`, locations `location-N`.
enum RickAndMortyIDs {
    /// The item id of resource `resource`'s item `id`.
    static func itemID(_ resource: RickAndMortyEndpoints.Resource, _ id: Int) -> String {
        resource == .character ? String(id) : "\(resource.rawValue)-\(id)"
    }

    /// The resource and API id an item id names; nil for ids of no resource (a renumbered duplicate `0-2`).
    static func parse(_ itemID: String) -> (resource: RickAndMortyEndpoints.Resource, id: Int)? {
        for resource in [RickAndMortyEndpoints.Resource.episode, .location] {
            let prefix = resource.rawValue + "-"
            if itemID.hasPrefix(prefix), let id = number(itemID.dropFirst(prefix.count)) { return (resource, id) }
        }
        return number(Substring(itemID)).map { (.character, $0) }
    }

    /// The item id an API URL names (`https://rickandmortyapi.com/api/episode/28` is `episode-28`),
    /// whatever its host: a mirror or the demo serves the same ids at another base URL.
    static func itemID(linkedBy url: URL, as resource: RickAndMortyEndpoints.Resource) -> String? {
        let components = url.pathComponents
        guard components.count >= 2, components[components.count - 2] == resource.rawValue,
              let id = number(Substring(components[components.count - 1])) else { return nil }
        return itemID(resource, id)
    }

    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
