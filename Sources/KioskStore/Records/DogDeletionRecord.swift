import Foundation
import GRDB

/// A row of `dogDeletion`: a dog the user deleted; refreshes never bring it back.
struct DogDeletionRecord: StoreRecord, Hashable {
    static let databaseTableName = "dogDeletion"

    var itemID: String
    var deletedAt: Date
}
