import Foundation
import KioskApp
import KioskCore

/// Human-readable renderings of pages, items and search results.
enum Render {
    static func page(_ update: CatalogUpdate, of catalog: any CatalogSource, favorites: Set<String>) -> String {
        let page = update.page
        let source = page.request.source
        var header = "\(source.displayName)"
        if let kind = page.request.filters["kind"], let period = page.request.filters["period"] {
            header += " — most \(kind), last \(period) day\(period == "1" ? "" : "s")"
        }
        var position = "page \(page.request.page)"
        if let totalPages = page.totalPages, totalPages > 0 { position += " of \(totalPages)" }
        if let totalItems = page.totalItems { position += " (\(totalItems) items)" }
        var lines = ["\(header) · \(position) · \(Output.status(update))"]
        let filters = page.request.filters.filter { $0.key != "kind" && $0.key != "period" }
        if !filters.isEmpty {
            lines.append("filters: " + filters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        }
        if page.items.isEmpty {
            lines.append("No items.")
        } else {
            let firstIndex = catalog.firstIndex(of: page.request)
            let rows = page.items.enumerated().map { index, item in
                [String(firstIndex + index + 1), item.itemID, (favorites.contains(item.itemID) ? "★ " : "") + item.title,
                 item.subtitle]
            }
            lines.append(Output.table(["#", "ID", "TITLE", "DETAILS"], rows, maxWidths: [5, 20, 60, 50]))
        }
        for issue in page.skipped { lines.append("skipped a malformed item at \(issue.path): \(issue.message)") }
        if page.hasNext {
            lines.append("Next: kiosk list \(source.rawValue) --page \(page.request.page + 1)")
        }
        if let attribution = page.attribution { lines.append(attribution) }
        return lines.joined(separator: "\n")
    }

    static func item(_ result: ItemResult) -> String {
        let item = result.item
        var lines = [(result.isFavorite ? "★ " : "") + item.title]
        if !item.subtitle.isEmpty { lines.append(item.subtitle) }
        switch item.detail {
        case .article(let article):
            lines.append("Section: \([article.section, article.subsection].filter { !$0.isEmpty }.joined(separator: " › "))")
            lines.append("Published: \(article.publishedDate)")
            if !item.summary.isEmpty { lines.append(""); lines.append(item.summary) }
            if !article.keywords.isEmpty { lines.append(""); lines.append("Keywords: " + article.keywords.joined(separator: ", ")) }
            if let url = article.url { lines.append("Read the full article: \(url.absoluteString)") }
            if let image = article.largestImage { lines.append("Image: \(image.url.absoluteString)") }
        case .marvelCharacter(let character):
            if !item.summary.isEmpty { lines.append(""); lines.append(item.summary) }
            for (name, collection) in [("Comics", character.comics), ("Series", character.series),
                                       ("Stories", character.stories), ("Events", character.events)]
            where collection.available > 0 {
                var line = "\(name) (\(collection.available)): " + collection.items.prefix(5).joined(separator: "; ")
                if collection.available > min(5, collection.items.count) { line += "; …" }
                lines.append(line)
            }
            if let url = item.imageURL { lines.append("Picture: \(url.absoluteString)") }
            lines.append(character.attribution)
        case .rickAndMorty(let character):
            lines.append("Status: \(character.status) \(character.statusEmoji)    Gender: \(character.gender)")
            lines.append("Species: \(character.species)" + (character.type.isEmpty ? "" : " (\(character.type))"))
            lines.append("Origin: \(character.origin.name)    Last seen: \(character.location.name)")
            lines.append("Episodes: \(character.episodes.count)")
            if let url = item.imageURL { lines.append("Picture: \(url.absoluteString)") }
        case .dog(let dog):
            lines.append(dog.description)
            if let url = dog.image { lines.append("Picture: \(url.absoluteString)") }
        }
        if let error = result.error { lines.append("(showing saved data: \(error))") }
        return lines.joined(separator: "\n")
    }

    static func search(_ result: SearchResult, source: SourceID) -> String {
        var lines = ["\(result.items.count) result\(result.items.count == 1 ? "" : "s") for \"\(result.query)\" in "
                     + "\(source.displayName) (\(result.origin == .upstream ? "from the upstream" : "from the store"))"]
        if let error = result.error { lines.append("Offline search: \(error)") }
        if !result.items.isEmpty {
            lines.append(Output.table(["ID", "TITLE", "DETAILS"], result.items.map { [$0.itemID, $0.title, $0.subtitle] },
                                      maxWidths: [20, 60, 50]))
        }
        return lines.joined(separator: "\n")
    }
}

extension Render {
    static func stats(_ stats: StoreStats) -> String {
        let rows = stats.sources.map { [$0.source.rawValue, String($0.items), String($0.snapshots), String($0.favorites)] }
        var lines = [Output.table(["SOURCE", "ITEMS", "PAGES", "FAVORITES"], rows, maxWidths: [14, 10, 10, 10])]
        lines.append("Images: \(stats.imageCount) (\(bytes(stats.imageBytes)))")
        lines.append("Dogs you deleted: \(stats.dogsDeleted)")
        lines.append("Database file: \(bytes(stats.databaseBytes))")
        return lines.joined(separator: "\n")
    }

    static func bytes(_ count: Int) -> String {
        ByteCountFormatter.string(fromByteCount: Int64(count), countStyle: .file)
    }
}
