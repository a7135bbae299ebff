import Foundation
import KioskCore

extension NYTimesArticleDTO {
    /// The catalog item for the article at `position` (0-based) of the ranking.
    func toDomain(position: Int) -> CatalogItem {
        let images = allImages
        let article = Article(
            rank: position + 1,
            url: url,
            section: section,
            subsection: subsection,
            byline: byline,
            publishedDate: publishedDate,
            updated: updated,
            type: type,
            keywords: adxKeywords
                .split(separator: ";")
                .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
                .filter { !$0.isEmpty },
            facets: desFacet + orgFacet + perFacet + geoFacet,
            images: images,
            caption: media.first.flatMap { Self.nonEmpty($0.caption) },
            copyright: media.first.flatMap { Self.nonEmpty($0.copyright) }
        )
        return CatalogItem(
            source: .nyt,
            itemID: String(id),
            title: title,
            subtitle: byline,
            summary: abstract,
            // The 210x140 crop is what a list row is designed around; otherwise the smallest keeps rows light.
            imageURL: (images.first { $0.format == "mediumThreeByTwo210" } ?? images.first)?.url,
            detail: .article(article)
        )
    }

    /// Every rendition of every media item, smallest area first (ties keep upstream order).
    private var allImages: [ImageReference] {
        let references = media.flatMap(\.metadata).compactMap { rendition -> ImageReference? in
            guard let url = rendition.url else { return nil }
            return ImageReference(
                url: url,
                width: rendition.width,
                height: rendition.height,
                format: rendition.format.isEmpty ? nil : rendition.format
            )
        }
        return references.enumerated()
            .sorted { lhs, rhs in
                let (left, right) = (Self.area(lhs.element), Self.area(rhs.element))
                return left != right ? left < right : lhs.offset < rhs.offset
            }
            .map(\.element)
    }

    private static func area(_ image: ImageReference) -> Int { (image.width ?? 0) * (image.height ?? 0) }

    private static func nonEmpty(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }
}
