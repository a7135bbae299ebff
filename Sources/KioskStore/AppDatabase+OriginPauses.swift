public import Foundation
import GRDB

// The origins that asked Kiosk to wait (429 or 503 with a Retry-After longer than its retries wait: `RateLimitGate`),
// kept across processes.

extension AppDatabase {
    /// Each origin (`scheme://host:port`) still asking Kiosk to wait at `date`: until when, and the status it answered.
    public func originPauses(at date: Date) throws -> [(origin: String, until: Date, status: Int)] {
        try read("read the origins that asked Kiosk to wait") { db in
            try Row.fetchAll(db, sql: "SELECT origin, until, status FROM originPause WHERE until > ?", arguments: [date.storedValue])
                .map { (origin: $0[0], until: Date(storedValue: $0[1]), status: $0[2]) }
        }
    }

    /// Keeps that `origin` asked Kiosk to wait until `until`, answering `status`; those whose time has passed go.
    public func setOriginPause(_ origin: String, until: Date, status: Int) throws {
        try write("keep that \(origin) asked Kiosk to wait") { db in
            try db.execute(sql: "DELETE FROM originPause WHERE until <= ?", arguments: [now().storedValue])
            try db.execute(sql: "INSERT OR REPLACE INTO originPause (origin, until, status) VALUES (?, ?, ?)",
                           arguments: [origin, until.storedValue, status])
        }
    }
}
