import GRDB

// The schema, defined once by an append-only migrator: a shipped migration is never edited,
// changes are new migrations ("v2", ...), so that every user's file upgrades without data loss.
// There is deliberately no `eraseDatabaseOnSchemaChange`: the file holds user data.

extension AppDatabase {
    /// The migrator that creates and upgrades the schema.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try createItemTables(db)
            try createSnapshotTables(db)
            try createUserTables(db)
            try createImageTable(db)
        }
        migrator.registerMigration("v2") { db in
            // The cache policy's stale window (CachePolicy.swift): NULL, any time, for pages stored before.
            try db.alter(table: SnapshotRecord.databaseTableName) { t in t.add(column: "staleShownUntil", .double) }
        }
        migrator.registerMigration("v3") { db in
            try db.alter(table: SnapshotRecord.databaseTableName) { t in t.add(column: "reportedTotal", .integer) }
            // A one-page list stored before v3 may count what the upstream counts (NYT's num_results, 1,491)
            // rather than what it holds (20): the count moves to reportedTotal and the page says what it holds.
            try db.execute(sql: """
                UPDATE snapshot SET reportedTotal = totalItems,
                    totalItems = (SELECT count(*) FROM snapshotItem WHERE snapshotKey = snapshot.key)
                WHERE totalPages = 1 AND totalItems > (SELECT count(*) FROM snapshotItem WHERE snapshotKey = snapshot.key)
                """)
        }
        migrator.registerMigration("v4") { db in
            // Idempotency keys of user writes (AppDatabase+WriteKeys.swift): user data, kept by clearCache.
            try db.create(table: "writeKey") { t in
                t.primaryKey("key", .text)
                t.column("fingerprint", .text).notNull()
                t.column("status", .integer).notNull()
                t.column("location", .text)
                t.column("createdAt", .double).notNull().indexed()
            }
        }
        migrator.registerMigration("v5") { db in
            // Browsers paired with `serve --lan` (AppDatabase+Devices.swift): user data, kept by clearCache. Every
            // request of a paired browser finds its row by the token's hash, hence the unique index.
            try db.create(table: PairedDeviceRecord.databaseTableName) { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("tokenHash", .text).notNull().unique()
                t.column("name", .text).notNull()
                t.column("pairedAt", .double).notNull()
                t.column("lastSeenAt", .double).notNull()
            }
        }
        migrator.registerMigration("v6") { db in
            // The pairing window (AppDatabase+Devices.swift): at most one open code, stored as a salted hash, with
            // its expiry and its wrong tries, shared by `serve --lan` and `kiosk devices pair` in other processes.
            try db.create(table: "pairingCode") { t in
                t.autoIncrementedPrimaryKey("id")
                t.column("salt", .blob).notNull()
                t.column("codeHash", .text).notNull()
                t.column("createdAt", .double).notNull()
                t.column("expiresAt", .double).notNull()
                t.column("failures", .integer).notNull().defaults(to: 0)
            }
            // Tokens of revoked devices (hashes), so a browser still holding one is told to forget what it saved
            // of Kiosk, and a browser whose token this store never knew (paired with another data directory) is not.
            try db.create(table: "revokedDevice") { t in
                t.primaryKey("tokenHash", .text)
                t.column("revokedAt", .double).notNull().indexed()
            }
            // Idempotency keys belong to the device that sent them (its scope), so one device can neither replay
            // nor block another's writes; keys recorded before belong to this machine's own browsers.
            try db.create(table: "writeKeyScoped") { t in
                t.column("scope", .text).notNull()
                t.column("key", .text).notNull()
                t.column("fingerprint", .text).notNull()
                t.column("status", .integer).notNull()
                t.column("location", .text)
                t.column("createdAt", .double).notNull()
                t.primaryKey(["scope", "key"])
            }
            try db.execute(sql: """
                INSERT INTO writeKeyScoped (scope, key, fingerprint, status, location, createdAt)
                SELECT ?, key, fingerprint, status, location, createdAt FROM writeKey
                """, arguments: [AppDatabase.localWriteScope])
            try db.drop(table: "writeKey")
            try db.rename(table: "writeKeyScoped", to: "writeKey")
            try db.create(index: "writeKey_on_createdAt", on: "writeKey", columns: ["createdAt"])
            try db.create(index: "writeKey_on_scope_createdAt", on: "writeKey", columns: ["scope", "createdAt"])
        }
        migrator.registerMigration("v7") { db in
            // The user's order and deletions belong to any catalog ordered by its user, not to the dogs alone
            // (AppDatabase+UserOrder.swift): the dogs' edits move over, kept. User data, kept by clearCache.
            try db.create(table: UserOrderRecord.databaseTableName) { t in
                t.column("source", .text).notNull()
                t.column("itemID", .text).notNull()
                t.column("position", .integer).notNull()
                t.column("upstreamPosition", .integer).notNull()
                t.primaryKey(["source", "itemID"])
            }
            try db.create(table: UserDeletionRecord.databaseTableName) { t in
                t.column("source", .text).notNull()
                t.column("itemID", .text).notNull()
                t.column("deletedAt", .double).notNull()
                t.primaryKey(["source", "itemID"])
            }
            try db.execute(sql: """
                INSERT INTO userOrder (source, itemID, position, upstreamPosition)
                SELECT 'dogs', itemID, position, upstreamPosition FROM dogOrder;
                INSERT INTO userDeletion (source, itemID, deletedAt) SELECT 'dogs', itemID, deletedAt FROM dogDeletion;
                DROP TABLE dogOrder;
                DROP TABLE dogDeletion;
                """)
        }
        migrator.registerMigration("v8") { db in
            // Home says what changed since a visit: an item's first sight tells "new" from "updated" (updatedAt
            // moves only when its payload changes). Rows stored before this version read 0, "seen long ago": so
            // they count as updated when they change, and nothing is rewritten here (an UPDATE of every item
            // would re-index every one through the full-text triggers).
            try db.alter(table: ItemRecord.databaseTableName) { t in
                t.add(column: "firstSeenAt", .double).notNull().defaults(to: 0)
            }
            try db.create(index: "item_on_updatedAt", on: ItemRecord.databaseTableName, columns: ["updatedAt"])
            // What the reader opened, newest first on Home: user data, kept by clearCache (an item it no longer
            // stores is left out until it is stored again), bounded by `readingHistoryLimit`.
            try db.create(table: "reading", options: [.withoutRowID]) { t in
                t.column("source", .text).notNull()
                t.column("itemID", .text).notNull()
                t.column("readAt", .double).notNull().indexed()
                t.primaryKey(["source", "itemID"])
            }
        }
        migrator.registerMigration("v9") { db in
            // An origin that asked Kiosk to wait (a long Retry-After) is not asked again meanwhile by the next process
            // either: a script running `kiosk list` in a loop spent the quota the catalog asked it to spare.
            try db.create(table: "originPause", options: [.withoutRowID]) { t in
                t.column("origin", .text).notNull().primaryKey()
                t.column("until", .double).notNull()
                t.column("status", .integer).notNull()
            }
        }
        return migrator
    }()

    private static func createItemTables(_ db: Database) throws {
        // One table for every catalog, keyed by (source, itemID). The explicit INTEGER PRIMARY KEY
        // matters: the full-text index refers to rows by rowid, and VACUUM (run by clearCache)
        // may renumber implicit rowids but never an INTEGER PRIMARY KEY.
        try db.create(table: ItemRecord.databaseTableName) { t in
            t.primaryKey("id", .integer)
            t.column("source", .text).notNull()
            t.column("itemID", .text).notNull()
            t.column("title", .text).notNull()
            t.column("subtitle", .text).notNull()
            t.column("summary", .text).notNull()
            t.column("imageURL", .text)
            t.column("keywords", .text).notNull()
            // The whole CatalogItem as JSON: reading a page decodes it without other joins.
            t.column("payload", .blob).notNull()
            t.column("updatedAt", .double).notNull()
            t.uniqueKey(["source", "itemID"])
        }

        // External-content FTS5 index over the searchable columns, kept in sync by GRDB's triggers.
        // `remove_diacritics 2` lets "dore" find "Doré". Prefix indexes for 1 to 3 characters make a
        // short prefix (what a user types first) one lazily read doclist instead of a merge of every
        // matching term's doclist; longer prefixes are expanded through `searchTerm` below. `source` is indexed too, so that a search within one catalog is
        // a single FTS5 query (search patterns restrict the user's words to the text columns).
        // Ranking is `kiosk_rank` (SearchRanking.swift), called explicitly by the search query
        // rather than configured as the table's `rank`, so that the file stays readable by tools
        // that do not have the function.
        try db.create(virtualTable: ItemRecord.searchTableName, using: FTS5()) { t in
            t.synchronize(withTable: ItemRecord.databaseTableName)
            t.tokenizer = SearchTokenizer.descriptor
            t.prefixes = [1, 2, 3]
            t.column("title")
            t.column("subtitle")
            t.column("summary")
            t.column("keywords")
            t.column("source")
        }
        // The index's long terms, so that a prefix of four characters or more can be searched as
        // the few exact terms it stands for (AppDatabase+Search.swift explains why).
        try db.create(table: SearchTermRecord.databaseTableName, options: [.withoutRowID]) { t in
            t.primaryKey("term", .text)
        }
    }

    private static func createSnapshotTables(_ db: Database) throws {
        try db.create(table: SnapshotRecord.databaseTableName) { t in
            t.primaryKey("key", .text)
            t.column("source", .text).notNull().indexed()
            t.column("page", .integer).notNull()
            t.column("request", .jsonText).notNull()
            t.column("fetchedAt", .double).notNull()
            t.column("freshUntil", .double).notNull()
            t.column("etag", .text)
            t.column("lastModified", .text)
            t.column("totalItems", .integer)
            t.column("totalPages", .integer)
            t.column("attribution", .text)
            t.column("skipped", .jsonText).notNull()
        }

        // Order is data: one row per position. WITHOUT ROWID clusters a page's rows together, so
        // reading a page is one range scan of the primary key.
        try db.create(table: SnapshotItemRecord.databaseTableName, options: [.withoutRowID]) { t in
            t.column("snapshotKey", .text).notNull()
                .references(SnapshotRecord.databaseTableName, onDelete: .cascade)
            t.column("position", .integer).notNull()
            t.column("source", .text).notNull()
            t.column("itemID", .text).notNull()
            t.primaryKey(["snapshotKey", "position"])
            // No cascade: deleting an item a page still shows must fail rather than silently
            // shorten the page.
            t.foreignKey(["source", "itemID"], references: ItemRecord.databaseTableName,
                         columns: ["source", "itemID"])
        }
        // Lets SQLite check that foreign key quickly when clearCache deletes many items.
        try db.create(index: "snapshotItem_on_item", on: SnapshotItemRecord.databaseTableName,
                      columns: ["source", "itemID"])
    }

    private static func createUserTables(_ db: Database) throws {
        // The id is the favoriting order ("newest first" without relying on clock resolution).
        try db.create(table: FavoriteRecord.databaseTableName) { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("source", .text).notNull()
            t.column("itemID", .text).notNull()
            t.column("createdAt", .double).notNull()
            t.uniqueKey(["source", "itemID"])
            // A favorite's item can never be deleted (clearCache keeps them).
            t.foreignKey(["source", "itemID"], references: ItemRecord.databaseTableName,
                         columns: ["source", "itemID"])
        }

        // The latest upstream dogs list: `upstreamPosition` is the upstream order (for reset),
        // `position` the user's order. No foreign key to `item`: this is user data that outlives
        // a cache clear. (v7 moves both tables to `userOrder` and `userDeletion`, per catalog.)
        try db.create(table: "dogOrder") { t in
            t.primaryKey("itemID", .text)
            t.column("position", .integer).notNull()
            t.column("upstreamPosition", .integer).notNull()
        }

        // Dogs the user deleted, remembered even when upstream stops and restarts listing them.
        try db.create(table: "dogDeletion") { t in
            t.primaryKey("itemID", .text)
            t.column("deletedAt", .double).notNull()
        }
    }

    private static func createImageTable(_ db: Database) throws {
        try db.create(table: ImageRecord.databaseTableName) { t in
            t.primaryKey("url", .text)
            t.column("data", .blob).notNull()
            t.column("contentType", .text)
            t.column("etag", .text)
            t.column("lastModified", .text)
            t.column("fetchedAt", .double).notNull()
            t.column("freshUntil", .double).notNull()
            // Kept apart from `data` so that summing sizes never reads the blobs.
            t.column("byteCount", .integer).notNull()
            // A counter rather than a timestamp: exact LRU order even for uses within one millisecond.
            t.column("lastAccess", .integer).notNull().indexed()
        }
    }
}
