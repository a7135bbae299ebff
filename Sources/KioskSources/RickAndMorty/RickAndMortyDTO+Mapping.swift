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
