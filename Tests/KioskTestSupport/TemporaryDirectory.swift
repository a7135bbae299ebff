import Foundation

/// Private folders for tests, one per test, never shared, all under one folder of the test process
/// that is removed when the process exits (a run makes a hundred stores and logs).
public enum TemporaryDirectory {
    /// This test process's folder under the system's temporary directory; removed at exit.
    static let root: URL = {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("kiosk-test-run-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TemporaryDirectory.root) }
        return root
    }()

    /// A new path no other test uses, `<root>/<prefix>-<UUID>`; nothing is created there.
    public static func url(_ prefix: String = "kiosk-tests") -> URL {
        root.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
    }

    /// A new, empty folder at such a path.
    public static func make(_ prefix: String = "kiosk-tests") throws -> URL {
        let folder = url(prefix)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
