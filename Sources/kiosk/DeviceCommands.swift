import ArgumentParser
import Foundation
import KioskApp
import KioskCore

/// `kiosk devices list|revoke`: the browsers paired with `kiosk serve --lan`. A revocation counts at the
/// device's next request, even while `serve` runs in another process (it reads the store on each request).
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List or revoke the browsers paired with `kiosk serve --lan`.",
        subcommands: [List.self, Revoke.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List paired devices: id, name, when paired, when last seen.")
        @OptionGroup var global: GlobalOptions
        @Flag var json = false

        func run() async throws {
            try await reportingErrors {
                let (devices, now) = try await Runtime.offline(global) { kiosk in (try kiosk.devices.list(), kiosk.now()) }
                try Output.emit(devices, json: json) {
                    guard !devices.isEmpty else {
                        return "No paired devices. A browser pairs by entering the code `kiosk serve --lan` prints."
                    }
                    return Output.table(["ID", "NAME", "PAIRED", "LAST SEEN"], devices.map { device in
                        [String(device.id), device.name, device.pairedAt.formatted(date: .abbreviated, time: .shortened),
                         Age(now.timeIntervalSince(device.lastSeenAt)).english]
                    }, maxWidths: [8, 40, 24, 16])
                }
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a paired device: its browser must pair again, from its next request on.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The device's id, as `kiosk devices list` prints it.") var id: Int64

        func validate() throws {
            guard id > 0 else { throw ValidationError("id must be a positive whole number (got \(id)).") }
        }

        func run() async throws {
            try await reportingErrors {
                try await Runtime.offline(global) { kiosk in try kiosk.devices.revoke(id: id) }
                Output.human("Revoked device \(id): its browser must pair again.")
            }
        }
    }
}
