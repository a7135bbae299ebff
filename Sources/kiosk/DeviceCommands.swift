import ArgumentParser
import Foundation
import KioskApp
import KioskCore

/// `kiosk devices pair|list|revoke`: the browsers paired with `kiosk serve --lan`. A new code and a
/// revocation count at once, even while `serve` runs in another process (it reads the store on each request).
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "Pair, list or revoke the browsers paired with `kiosk serve --lan`.",
        subcommands: [Pair.self, List.self, Revoke.self])

    struct Pair: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a new pairing code: valid for 10 minutes, for one browser; any earlier code stops working.",
            discussion: """
                The browser on another machine opens kiosk serve --lan's address and enters the code on its /pair \
                page. Twenty wrong codes burn it (serve says so); run this again for a new one. The code is stored \
                only as a salted hash, in the store of the data served (the demo store, or the real one with --live).
                """)
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print {code, expiresAt} as JSON.") var json = false

        func run() async throws {
            try await reportingErrors {
                let window = try await Runtime.offline(global, creating: true) { kiosk in try kiosk.devices.openPairingWindow() }
                let minutes = Int(PairedDevices.pairingWindow / 60)
                try Output.emit(PairingCodeJSON(code: window.code.displayed, expiresAt: window.expiresAt), json: json) {
                    """
                    Pairing code: \(window.code.displayed)
                    Enter it on the pairing page of kiosk serve --lan within \(minutes) minutes (until \
                    \(window.expiresAt.formatted(date: .omitted, time: .shortened))); it pairs one browser, and any earlier code no longer works.
                    """
                }
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List paired devices: id, name, when paired, when last seen.")
        @OptionGroup var global: GlobalOptions
        @Flag var json = false

        func run() async throws {
            try await reportingErrors {
                let (devices, now) = try await Runtime.offline(global) { kiosk in (try kiosk.devices.list(), kiosk.now()) }
                try Output.emit(devices, json: json) {
                    guard !devices.isEmpty else {
                        return "No paired devices. A browser pairs by entering the code `kiosk devices pair` shows."
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

/// `kiosk devices pair --json`.
private struct PairingCodeJSON: Encodable {
    let code: String
    let expiresAt: Date
}
