import GRDB
import KioskCore
@testable import KioskStore

// What the tests read inside the store that no face asks for.
extension AppDatabase {
    /// How many pages of `source` are stored.
    func storedPageCount(source: SourceID) throws -> Int {
        try writer.read { db in try SnapshotRecord.all().filter(source: source).fetchCount(db) }
    }

    /// How many images the cache holds and their total size in bytes.
    func imageCacheUsage() throws -> (count: Int, bytes: Int) {
        try writer.read { db in try Self.imageUsage(db) }
    }
}
