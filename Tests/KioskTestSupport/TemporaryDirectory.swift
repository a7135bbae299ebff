import Foundation

/// Private folders under the system's temporary directory, one per test, never shared.
public enum TemporaryDirectory {
    /// A new path no other test uses, `<tmp>/<prefix>-<UUID>`; nothing is created there.
    public static func url(_ prefix: String = "kiosk-tests") -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    }

    /// A new, empty folder at such a path.
    public static func make(_ prefix: String = "kiosk-tests") throws -> URL {
        let folder = url(prefix)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
