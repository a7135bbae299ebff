import ArgumentParser
import Foundation
import KioskApp
import KioskCore

struct DogsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dogs", abstract: "Edit the dogs list: delete, move, reset. Your edits survive refreshes.",
        subcommands: [Delete.self, Move.self, Reset.self])

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a dog. Deleting the last one fetches the list again.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The dog's id, as `kiosk list dogs` prints it.") var id: String

        func validate() throws {
            try refuseEmpty(["<id>": id])
        }

        func run() async throws {
            try await Runtime.command(global) { runtime in
                let fetched = try await runtime.kiosk.catalog.page(PageRequest(source: .dogs))
                let before = fetched.page.items
                let dogs = try await DogsCommand.unlessNotKept(fetched) { try await runtime.kiosk.catalog.deleteFromUserOrder(source: .dogs, itemID: id) }
                let count = "\(dogs.count) \(dogs.count == 1 ? "dog" : "dogs")"
                // The last one deleted, the list was fetched again: the count is of a list started over, not of what is "left".
                Output.human(before.map(\.itemID) == [id] ? "Deleted \(id), the last dog: the list starts over with \(count)."
                                                           : "Deleted \(id). \(count) left.")
            }
        }
    }

    struct Move: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move a dog to a 1-based position.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The dog's id.") var id: String
        @Argument(help: "The new 1-based position.") var position: Int

        func validate() throws {
            try refuseEmpty(["<id>": id])
            guard position >= 1 else { throw ValidationError("position must be 1 or more (got \(position)).") }
        }

        func run() async throws {
            try await Runtime.command(global) { runtime in
                let fetched = try await runtime.kiosk.catalog.page(PageRequest(source: .dogs))
                let dogs = try await DogsCommand.unlessNotKept(fetched) { try runtime.kiosk.catalog.moveInUserOrder(source: .dogs, itemID: id, to: position - 1) }
                Output.human(dogs.enumerated().map { "\($0.offset + 1). \($0.element.title) (\($0.element.itemID))" }
                    .joined(separator: "\n"))
            }
        }
    }

    /// `edit`'s result; when it finds no such dog in a list that could not be stored (a full disk), why it could not,
    /// rather than a dog "not in the list" the user can see in it.
    static func unlessNotKept<T>(_ fetched: CatalogUpdate, _ edit: () async throws -> T) async throws -> T {
        do {
            return try await edit()
        } catch KioskError.notFound(let message) {
            throw fetched.notKept ?? KioskError.notFound(message)
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Forget deletions and order; fetch the list again.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await Runtime.command(global) { runtime in
                let dogs = try await runtime.kiosk.catalog.resetUserOrder(source: .dogs)
                Output.human("Reset. \(dogs.count) dogs.")
            }
        }
    }
}

struct FavoriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "favorite", abstract: "Star items of any catalog; favorites read offline.",
        subcommands: [Add.self, Remove.self, List.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Star an item.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var item: ItemArguments

        func run() async throws {
            try await Runtime.command(global) { runtime in
                // The item as stored, else as fetched (and stored with the star, so it reads offline).
                let result = try await runtime.kiosk.catalog.item(source: item.source, itemID: item.id)
                try runtime.kiosk.catalog.addFavorite(result.item)
                Output.human("★ \(result.item.title)")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unstar an item.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var item: ItemArguments

        func run() async throws {
            try await Runtime.command(global) { runtime in
                // The id as `add` took it: " 1" and "01" are item 1.
                let id = try runtime.kiosk.catalog.storedItemID(item.id, source: item.source)
                guard try runtime.kiosk.catalog.favoriteIDs(source: item.source).contains(id) else {
                    throw KioskError.notFound("\(item.source.rawValue) item \(id) is not a favorite")
                }
                try runtime.kiosk.catalog.setFavorite(false, source: item.source, itemID: id)
                Output.human("Removed \(item.source.rawValue)/\(id) from favorites.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List favorites across catalogs.")
        @OptionGroup var global: GlobalOptions
        @Flag var json = false

        func run() async throws {
            try await reportingErrors {
                // Favorites come from the store alone: no upstream needed.
                let items = try await Runtime.offline(global) { try $0.catalog.favorites() }
                if json {
                    print(try Output.json(FavoritesJSON(items)))
                } else if items.isEmpty {
                    Output.human("No favorites yet. Add one with: kiosk favorite add <source> <id>")
                } else {
                    Output.human(Output.table(["SOURCE", "ID", "TITLE"], items.map { [$0.source.rawValue, $0.itemID, $0.title] },
                                       maxWidths: [12, 24, 70]))
                }
            }
        }
    }
}

struct CacheCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Inspect or clear the offline store.", subcommands: [Stats.self, Clear.self])

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What is stored, per catalog.")
        @OptionGroup var global: GlobalOptions
        @Flag var json = false

        func run() async throws {
            try await reportingErrors {
                let configuration = try Runtime.configuration(global)
                let stats = try await Runtime.offline(global) { try $0.catalog.stats() }
                if json {
                    print(try Output.json(stats))
                } else {
                    Output.human("Store: \(configuration.databaseURL.path)")
                    Output.human(Render.stats(stats))
                }
            }
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drop cached pages and images; keeps favorites and your dogs edits.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await reportingErrors {
                let report = try Kiosk.clearCache(try Runtime.configuration(global))
                Output.human("Cleared cached pages and images. Favorites and dogs edits are kept.")
                if report.clearedRequestLog { Output.human("The disk was full: the request log was cleared too, to make room.") }
            }
        }
    }
}
