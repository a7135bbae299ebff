import Foundation
import GRDB
import KioskCore

/// The conventions every record of this module follows.
///
/// Dates are stored as seconds since the reference date (a REAL): that is exactly how `Date`
/// holds them, so they round-trip bit for bit, while GRDB's default text format keeps
/// milliseconds only and would make a stored snapshot differ from the one that was saved.
protocol StoreRecord: Codable, FetchableRecord, PersistableRecord {}

extension StoreRecord {
    static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }
}

/// A record that belongs to one catalog: a `source` column, and an `itemID` one when it names an item.
protocol SourceScopedRecord: TableRecord {}

extension DerivableRequest where RowDecoder: SourceScopedRecord {
    /// Rows of one source, or every row when `source` is nil.
    func filter(source: SourceID?) -> Self {
        guard let source else { return self }
        return filter(Column("source") == source.rawValue)
    }

    /// One item's row by its key.
    func filter(source: SourceID, itemID: String) -> Self {
        filter(Column("source") == source.rawValue && Column("itemID") == itemID)
    }
}

extension Date {
    /// Reads a date stored by a `StoreRecord` from a raw row (hot paths that skip Codable).
    init(storedValue: Double) {
        self.init(timeIntervalSinceReferenceDate: storedValue)
    }

    /// The value a `StoreRecord` stores for this date.
    var storedValue: Double { timeIntervalSinceReferenceDate }
}
