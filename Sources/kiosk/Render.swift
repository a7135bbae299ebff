import Foundation
import KioskApp
import KioskCore

/// Human-readable renderings of pages, items and search results.
enum Render {
    /// The page as a table, with a `Next:` line that asks for the next page with the same filters and `carried` options
    /// (a data folder, --live, --offline), as typed.
    static func page(_ update: CatalogUpdate, of catalog: any CatalogSource, favorites: Set<String>, carried: [String] = []) -> String {
        let page = update.page
        let source = page.request.source
        var header = "\(source.displayName)"
        if let kind = page.request.filters["kind"], let period = page.request.filters["period"] {
            header += " — most \(kind), last \(period) day\(period == "1" ? "" : "s")"
        }
        var position = "page \(page.request.page)"
        if let totalPages = page.totalPages, totalPages > 0 { position += " of \(totalPages)" }
        if let totalItems = page.totalItems {
            position += " (\(totalItems) item\(totalItems == 1 ? "" : "s")"
                + (page.reportedTotal.map { "; the upstream counts \($0) in all" } ?? "") + ")"
        }
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
            // The filters are the list command's options of the same names.
            let options = page.request.filters.sorted { $0.key < $1.key }.flatMap { ["--\($0.key)", Output.shellQuoted($0.value)] }
            lines.append((["Next: kiosk list", source.rawValue] + options + carried + ["--page", String(page.request.page + 1)]).joined(separator: " "))
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
            if let url = article.url, url.opensInABrowser { lines.append("Read the full article: \(url.absoluteString)") }
            if let image = article.largestImage, image.url.opensInABrowser { lines.append("Image: \(image.url.absoluteString)") }
        case .marvelCharacter(let character):
            if !item.summary.isEmpty { lines.append(""); lines.append(item.summary) }
            for (name, collection) in [("Comics", character.comics), ("Series", character.series),
                                       ("Stories", character.stories), ("Events", character.events)]
            where collection.available > 0 {
                var line = "\(name) (\(collection.available)): " + collection.items.prefix(5).joined(separator: "; ")
                if collection.available > min(5, collection.items.count) { line += "; …" }
                lines.append(line)
            }
            if let url = item.imageURL, url.opensInABrowser { lines.append("Picture: \(url.absoluteString)") }
            lines.append(character.attribution)
        case .rickAndMorty(let character):
            lines.append("Status: \(character.status) \(character.statusEmoji)    Gender: \(character.gender)")
            lines.append("Species: \(character.species)" + (character.type.isEmpty ? "" : " (\(character.type))"))
            lines.append("Origin: " + place(character.origin, result.linked.entries(.origin).first))
            lines.append("Last seen: " + place(character.location, result.linked.entries(.location).first))
            let episodes = result.linked.entries(.episode)
            lines.append("")
            lines.append("Episodes (\(episodes.count)):")
            for entry in episodes { lines.append("  " + linkedLine(entry)) }
            if let url = item.imageURL, url.opensInABrowser { lines.append("Picture: \(url.absoluteString)") }
        case .rickAndMortyEpisode(let episode):
            lines.append("Aired: \(episode.airDate(language: "en"))")
            lines += linkedCharacters(result.linked, role: .character, heading: "Characters")
        case .rickAndMortyLocation(let location):
            lines.append("Type: \(known(location.type))    Dimension: \(known(location.dimension))")
            lines += linkedCharacters(result.linked, role: .resident, heading: "Residents")
        case .dog(let dog):
            lines.append(dog.description)
            if let url = dog.image, url.opensInABrowser { lines.append("Picture: \(url.absoluteString)") }
        }
        if let error = result.error { lines.append("(showing saved data: \(error))") }
        let missing = result.linked.missing.count
        if missing > 0 {
            lines.append("(\(missing) linked item\(missing == 1 ? " is" : "s are") not stored and could not be fetched"
                         + (result.linked.error.map { ": \($0))" } ?? ")"))
        }
        for issue in result.linked.skipped { lines.append("skipped a malformed linked item at \(issue.path): \(issue.message)") }
        return lines.joined(separator: "\n")
    }

    /// "Earth (C-137) — Planet · Dimension C-137 · 27 residents (location-1)", or the name alone.
    private static func place(_ place: RickAndMortyCharacter.Place, _ entry: LinkedItems.Entry?) -> String {
        guard let entry else { return place.name }
        guard let item = entry.item, case .rickAndMortyLocation(let location) = item.detail else {
            return "\(place.name) (\(entry.link.itemID), not available)"
        }
        let facts = [location.typeAndDimension, residents(location.residents.count)].filter { !$0.isEmpty }
        return "\(item.title) — \(facts.joined(separator: " · ")) (\(item.itemID))"
    }

    private static func residents(_ count: Int) -> String { "\(count) resident\(count == 1 ? "" : "s")" }

    private static func known(_ text: String) -> String {
        text.isEmpty || text.lowercased() == "unknown" ? "unknown" : text
    }

    /// An episode as "S01E01 · Pilot · December 2, 2013", a character as its name and id.
    private static func linkedLine(_ entry: LinkedItems.Entry) -> String {
        guard let item = entry.item else { return "\(entry.link.itemID) — not available" }
        if case .rickAndMortyEpisode(let episode) = item.detail { return episode.line(title: item.title, language: "en") }
        return "\(item.title) (\(item.itemID))"
    }

    /// The page of linked characters, with the command for the next page.
    private static func linkedCharacters(_ linked: LinkedItems, role: ItemLink.Role, heading: String) -> [String] {
        let total = linked.counts[role] ?? 0
        var lines = ["", "\(heading) (\(total))" + (linked.pageCount > 1 ? ", page \(linked.page) of \(linked.pageCount):" : ":")]
        lines += linked.entries(role).map { "  " + linkedLine($0) }
        if total == 0 { lines.append("  none") }
        return lines
    }

    /// A search's results; `carried`, the options the command to the next page repeats.
    static func search(_ result: SearchResult, source: SourceID, carried: [String]) -> String {
        let total = result.totalItems ?? result.items.count
        let pages = result.totalPages.map { $0 > 1 ? ", page \(result.page) of \($0)" : "" } ?? ""
        // The upstream's answer now, its answer kept from before (it failed now), or the store's own search.
        let origin = result.origin == .store ? "from the store" : result.error == nil ? "from the upstream" : "the upstream's earlier answer, stored"
        var lines = ["\(total) result\(total == 1 ? "" : "s") for \"\(result.query)\" in \(source.displayName) (\(origin))\(pages)"
                     + (result.moreMatch ? "; more match: add a word to narrow them" : "")]
        if let error = result.error {
            let said = switch (result.origin == .store, error.isConnectivityFailure) {
            case (true, true): "Offline search"
            case (true, false): "Searched what is stored, as the upstream failed"
            case (false, true): "Offline: the upstream's earlier answer"
            case (false, false): "The upstream's earlier answer, as it failed now"
            }
            lines.append(said + ": \(error)")
        }
        if !result.items.isEmpty {
            lines.append(Output.table(["ID", "TITLE", "DETAILS"], result.items.map { [$0.itemID, $0.title, $0.subtitle] },
                                      maxWidths: [20, 60, 50]))
        }
        if let pages = result.totalPages, result.page < pages, !result.items.isEmpty {
            lines.append((["Next: kiosk search", source.rawValue, Output.shellQuoted(result.query)] + carried
                          + ["--page", String(result.page + 1)]).joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }
}

extension Render {
    static func stats(_ stats: StoreStats) -> String {
        let rows = stats.sources.map {
            [$0.source.rawValue, String($0.items), String($0.snapshots), String($0.favorites), String($0.deleted)]
        }
        // DELETED: what you deleted from a list you order yourself (the dogs), kept deleted across refreshes.
        var lines = [Output.table(["SOURCE", "ITEMS", "PAGES", "FAVORITES", "DELETED"], rows, maxWidths: [14, 10, 10, 10, 10])]
        lines.append("Images: \(stats.imageCount) (\(bytes(stats.imageBytes)))")
        lines.append("Database file: \(bytes(stats.databaseBytes))")
        return lines.joined(separator: "\n")
    }

    /// "1 page", "3 pages": a count with its noun, plural but for one (the nouns used here take an s).
    static func count(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }

    /// A size as people read it ("1.2 MB", "512 bytes"); nothing as "0 bytes", not Foundation's "Zero KB".
    static func bytes(_ count: Int) -> String {
        count == 0 ? "0 bytes" : ByteCountFormatter.string(fromByteCount: Int64(count), countStyle: .file)
    }
}
