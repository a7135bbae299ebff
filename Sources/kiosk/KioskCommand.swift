import ArgumentParser
import Foundation
import KioskApp
import KioskCore

/// `kiosk`: read four content APIs from the terminal, offline-first.
@main
struct KioskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiosk",
        abstract: "An offline-first reader for NYT, Marvel, Rick and Morty and dogs.",
        discussion: """
            Sources: nyt, marvel, rickandmorty, dogs. Everything seen stays readable offline.
            With no keys or --live, Kiosk runs against its embedded demo upstream on loopback.
            """,
        subcommands: [
            ServeCommand.self, ListCommand.self, ShowCommand.self, SearchCommand.self, SyncCommand.self, DogsCommand.self,
            FavoriteCommand.self, CacheCommand.self, LogCommand.self, HARCommand.self, MockCommand.self, BreakpointCommand.self,
            DemoUpstreamCommand.self,
        ]
    )
}

/// Options every data command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: "Folder for kiosk.sqlite (default: $XDG_DATA_HOME/kiosk).")
    var dataDir: String?

    @Flag(name: .long, help: "Use the real APIs instead of the embedded demo upstream (needs keys).")
    var live = false
}

extension SourceID: ExpressibleByArgument {
    public init?(argument: String) { self.init(userInput: argument) }
    public static var allValueStrings: [String] { allCases.map(\.rawValue) }
}
