import GRDB
import GRDBSQLite

/// `kiosk_rank(itemSearch)`: the FTS5 ranking function of offline search, registered on every
/// connection.
///
/// It is BM25 without the IDF factor: per column, term-frequency saturation (k1 = 1.2) and length
/// normalisation (b = 0.75), weighted by column (title 10, subtitle 4, summary 1, keywords 3,
/// source 0), summed over the query's phrases. Higher is better.
///
/// Why not FTS5's `bm25()`: its IDF factor counts, once per query, every row that matches each
/// phrase. A one- or two-letter prefix over 100,000 items matches most of them, and measured in
/// release that scan alone costs 3–8 ms per query, on top of ~6 µs per ranked row, which breaks
/// the 10 ms p95 budget. Every phrase of a Kiosk query must match (terms are ANDed), so IDF only
/// reweights terms that all results contain anyway; dropping it costs little relevance.
enum SearchRanking {
    static let functionName = "kiosk_rank"

    /// Column weights, in the column order of the `itemSearch` table.
    static let columnWeights: [Double] = [10, 4, 1, 3, 0]

    /// Registers the function on one connection (from `Configuration.prepareDatabase`).
    static func register(_ db: Database) throws {
        let api = FTS5.api(db)
        let code = functionName.withCString { name in
            api.pointee.xCreateFunction(UnsafeMutablePointer(mutating: api), name, nil, kioskRank, nil)
        }
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: "cannot register the FTS5 function \(functionName)")
        }
    }
}

/// The C entry point FTS5 calls once per ranked row.
private func kioskRank(
    api: UnsafePointer<Fts5ExtensionApi>?,
    fts: OpaquePointer?,
    context: OpaquePointer?,
    argc: Int32,
    argv: UnsafeMutablePointer<OpaquePointer?>?
) {
    guard let api = api?.pointee,
          let xColumnCount = api.xColumnCount, let xPhraseCount = api.xPhraseCount,
          let xInstCount = api.xInstCount, let xInst = api.xInst,
          let xColumnSize = api.xColumnSize, let xColumnTotalSize = api.xColumnTotalSize,
          let xRowCount = api.xRowCount
    else {
        sqlite3_result_error(context, "kiosk_rank: incomplete FTS5 API", -1)
        return
    }
    let columnCount = Int(xColumnCount(fts))
    let phraseCount = Int(xPhraseCount(fts))
    var instanceCount: Int32 = 0
    var rowCount: Int64 = 0
    guard xInstCount(fts, &instanceCount) == SQLITE_OK, xRowCount(fts, &rowCount) == SQLITE_OK,
          columnCount > 0, phraseCount > 0
    else {
        sqlite3_result_double(context, 0)
        return
    }

    let k1 = 1.2, b = 0.75
    let weights = SearchRanking.columnWeights
    var score = 0.0
    // Hit counts per (phrase, column), on the stack: a query has at most 9 phrases and 5 columns.
    withUnsafeTemporaryAllocation(of: Int32.self, capacity: phraseCount * columnCount) { hits in
        hits.initialize(repeating: 0)
        for index in 0..<instanceCount {
            var phrase: Int32 = 0, column: Int32 = 0, offset: Int32 = 0
            guard xInst(fts, index, &phrase, &column, &offset) == SQLITE_OK,
                  phrase >= 0, Int(phrase) < phraseCount, column >= 0, Int(column) < columnCount
            else { continue }
            hits[Int(phrase) * columnCount + Int(column)] += 1
        }
        for column in 0..<min(columnCount, weights.count) where weights[column] > 0 {
            var length: Int32 = 0, totalLength: Int64 = 0
            guard xColumnSize(fts, Int32(column), &length) == SQLITE_OK,
                  xColumnTotalSize(fts, Int32(column), &totalLength) == SQLITE_OK
            else { continue }
            let averageLength = rowCount > 0 ? max(Double(totalLength) / Double(rowCount), 1) : 1
            let norm = k1 * (1 - b + b * Double(length) / averageLength)
            for phrase in 0..<phraseCount {
                let tf = Double(hits[phrase * columnCount + column])
                if tf > 0 { score += weights[column] * tf * (k1 + 1) / (tf + norm) }
            }
        }
    }
    sqlite3_result_double(context, score)
}
