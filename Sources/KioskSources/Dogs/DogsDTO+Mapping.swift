import Foundation
import KioskCore

extension DogDTO {
    /// The catalog item under `itemID` (a slug of the name, made unique by `DogSlugs`).
    func toDomain(itemID: String) -> CatalogItem {
        CatalogItem(
            source: .dogs,
            itemID: itemID,
            title: dogName,
            subtitle: age == 1 ? "Almost 1 year" : "Almost \(age) years",
            summary: description,
            imageURL: image,
            detail: .dog(Dog(name: dogName, description: description, age: age, image: image))
        )
    }
}

/// Stable item IDs for dogs, which have none upstream: the name as a slug, duplicates numbered in list order.
/// The user's favorites, deletions and order are keyed by these, so the rule must not change.
enum DogSlugs {
    /// One unique slug per name, in order: "Rex", "Rex" -> "rex", "rex-2".
    static func assign(_ names: [String]) -> [String] {
        var used: Set<String> = []
        return names.map { name in
            let base = slug(name)
            var candidate = base
            var number = 1
            // Also steps over a later name that slugs to an earlier dedupe ("Rex", "Rex", "Rex 2").
            while used.contains(candidate) {
                number += 1
                candidate = "\(base)-\(number)"
            }
            used.insert(candidate)
            return candidate
        }
    }

    /// Lowercase ASCII letters and digits joined by single hyphens; accents folded ("Café" -> "cafe").
    /// A name with no such characters becomes "dog".
    static func slug(_ name: String) -> String {
        let folded = name.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive],
                                  locale: Locale(identifier: "en_US_POSIX"))
        var result = ""
        var pendingHyphen = false
        for scalar in folded.unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) {
                if pendingHyphen, !result.isEmpty { result += "-" }
                pendingHyphen = false
                result.unicodeScalars.append(scalar)
            } else {
                pendingHyphen = true
            }
        }
        return result.isEmpty ? "dog" : result.lowercased()
    }
}
