import Crypto
import Foundation
import GRDB
import KioskCore

// Inserting records, eviction and clearing (RequestLog+Schema.swift describes the tables).

extension RequestLog {
    /// At most this many leading bytes of a body are indexed: the whole of any catalog answer
    /// (Marvel's largest pages are about 200 KB), while a huge body does not hold up the writer.
    static let maxIndexedBodyBytes = 256 * 1024
    /// What a row costs beyond its text and bodies (numbers, row and index entries), counted in
    /// `byteCount` so that a log of tiny records is bounded too.
    static let rowOverheadBytes = 64

    private static let insertEntrySQL = """
        INSERT INTO logEntry (startedAt, source, endpoint, method, url, status, statusClass, decision,
                              queued, connect, firstByte, download, duration, error,
                              requestBodySize, responseBodySize, requestTextLength, responseTextLength,
                              byteCount, requestHeaders, responseHeaders, cacheStatus, touchedBy, bodyID, dns, tls,
                              httpVersion)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Inserts `records` in order, indexes them, and adds their sizes to the running total, within
    /// the caller's transaction; returns the id of the last one (0 for none). A record whose bodies are
    /// stored already (the same bytes, from any record still logged) points at them instead of storing them again.
    @discardableResult
    static func insert(_ records: [RequestRecord], _ db: Database) throws -> Int64 {
        guard !records.isEmpty else { return 0 }
        let insertEntry = try db.cachedStatement(sql: insertEntrySQL)
        let findBody = try db.cachedStatement(sql: "SELECT id FROM logBody WHERE hash = ?")
        let shareBody = try db.cachedStatement(sql: "UPDATE logBody SET refs = refs + ? WHERE id = ?")
        let insertBody = try db.cachedStatement(sql: """
            INSERT INTO logBody (requestBody, responseBody, searchText, hash, refs, size) VALUES (?, ?, ?, ?, 1, ?)
            """)
        var lastID: Int64 = 0
        var addedBytes: Int64 = 0
        // The bodies this batch found or stored, by hash, and the references it adds to each found one: an app polling
        // one URL (a load test) sends a batch of records that share one body, which is then looked up and counted once.
        var bodies: [Data: (id: Int64, addedRefs: Int64)] = [:]
        var worked = WorkedBodies()
        for record in records {
            let requestHeaders = headersJSON(record.requestHeaders)
            let responseHeaders = headersJSON(record.responseHeaders)
            let cacheStatus = record.cacheStatus.headerValue
            let touchedBy = touchesJSON(record.touchedBy)
            var requestTextLength: Int?
            var responseTextLength: Int?
            var bodyID: Int64?
            if record.requestBody != nil || record.responseBody != nil {
                let body = worked.body(request: record.requestBody, response: record.responseBody)
                let hash = body.hash
                (requestTextLength, responseTextLength) = (body.requestTextLength, body.responseTextLength)
                if let seen = bodies[hash] {
                    bodies[hash]?.addedRefs += 1
                    bodyID = seen.id
                } else if let shared = try db.executeRaw(findBody, bind: { $0.bind(hash) }) {
                    bodies[hash] = (shared, 1)
                    bodyID = shared
                } else {
                    let searchText = searchText(of: [
                        indexedText(of: record.requestBody, length: requestTextLength, headers: record.requestHeaders),
                        indexedText(of: record.responseBody, length: responseTextLength, headers: record.responseHeaders),
                    ].compactMap { $0 })
                    let size = (record.requestBody?.data.count ?? 0) + (record.responseBody?.data.count ?? 0)
                        + (searchText?.utf8.count ?? 0)
                    try db.executeRaw(insertBody) { values in
                        values.bind(record.requestBody?.data)
                        values.bind(record.responseBody?.data)
                        values.bind(searchText)
                        values.bind(hash)
                        values.bind(size)
                    }
                    bodyID = db.lastInsertedRowID
                    bodies[hash] = (db.lastInsertedRowID, 0)
                    addedBytes += Int64(size)
                }
            }
            let byteCount = rowOverheadBytes + record.url.utf8.count + record.endpoint.utf8.count
                + record.method.utf8.count + (record.source?.rawValue.utf8.count ?? 0) + (record.error?.utf8.count ?? 0)
                + requestHeaders.utf8.count + responseHeaders.utf8.count + cacheStatus.utf8.count
                + (touchedBy?.utf8.count ?? 0)
            try db.executeRaw(insertEntry) { values in
                values.bind(record.startedAt.timeIntervalSinceReferenceDate)
                values.bind(record.source?.rawValue)
                values.bind(record.endpoint)
                values.bind(record.method)
                values.bind(record.url)
                values.bind(record.status)
                values.bind(record.statusClass.rawValue)
                values.bind(record.decision.rawValue)
                values.bind(record.timings.queued)
                values.bind(record.timings.connect)
                values.bind(record.timings.firstByte)
                values.bind(record.timings.download)
                values.bind(record.timings.total)
                values.bind(record.error)
                values.bind(record.requestBody?.originalSize)
                values.bind(record.responseSize)
                values.bind(requestTextLength)
                values.bind(responseTextLength)
                values.bind(byteCount)
                values.bind(requestHeaders)
                values.bind(responseHeaders)
                values.bind(cacheStatus)
                values.bind(touchedBy)
                values.bind(bodyID)
                values.bind(record.timings.dns)
                values.bind(record.timings.tls)
                values.bind(record.httpVersion)
            }
            lastID = db.lastInsertedRowID
            addedBytes += Int64(byteCount)
        }
        for (_, body) in bodies where body.addedRefs > 0 {
            try db.executeRaw(shareBody) { values in
                values.bind(body.addedRefs)
                values.bind(body.id)
            }
        }
        try addStoredBytes(addedBytes, db)
        return lastID
    }

    /// What identifies a record's bodies among the stored ones: SHA-256 of both, each told apart from a missing
    /// one and from the other by a tag and its length, so no two different pairs share a hash.
    static func bodyHash(request: Data?, response: Data?) -> Data {
        var hasher = SHA256()
        for body in [request, response] {
            var frame = [UInt8](repeating: 0, count: 9)
            if let body {
                frame[0] = 1
                withUnsafeBytes(of: UInt64(body.count).littleEndian) { frame.replaceSubrange(1..., with: $0) }
            }
            hasher.update(data: frame)
            if let body { hasher.update(data: body) }
        }
        return Data(hasher.finalize())
    }

    /// What `insert` works out of a record's bodies, for the last few distinct bodies of a batch: a record whose bodies
    /// are byte for byte those of one before it (an app polling a URL, a load test: most of a busy proxy's records)
    /// reuses their hash and indexed lengths instead of hashing and validating kilobytes again. Comparing bodies costs
    /// a length check, then a memcmp only when they may be equal: a small part of what hashing them costs.
    struct WorkedBodies {
        struct Body {
            let request: Data?
            let response: Data?
            let hash: Data
            let requestTextLength: Int?
            let responseTextLength: Int?
        }

        /// The most recently seen first; at most `capacity`, enough for the few URLs an app polls at once.
        private var recent: [Body] = []
        private static let capacity = 4

        /// The hash and indexed lengths of these bodies, worked out unless they are those of a recent record.
        mutating func body(request: CapturedBody?, response: CapturedBody?) -> Body {
            let (request, response) = (request?.data, response?.data)
            if let index = recent.firstIndex(where: { $0.request?.count == request?.count && $0.response?.count == response?.count
                && $0.request == request && $0.response == response }) {
                let body = recent[index]
                if index > 0 { recent.remove(at: index); recent.insert(body, at: 0) }
                return body
            }
            let body = Body(request: request, response: response, hash: RequestLog.bodyHash(request: request, response: response),
                            requestTextLength: RequestLog.indexedTextLength(of: request),
                            responseTextLength: RequestLog.indexedTextLength(of: response))
            if recent.count == Self.capacity { recent.removeLast() }
            recent.insert(body, at: 0)
            return body
        }
    }

    /// Headers as a JSON array of [name, value] pairs: order and duplicates are kept.
    private static func headersJSON(_ headers: [RequestRecord.HeaderField]) -> String {
        OrderedJSON.pairsText(headers.lazy.map { (name: $0.name, value: $0.value) })
    }

    /// The touches as a JSON array, or nil (NULL) for an untouched exchange.
    private static func touchesJSON(_ touches: [ExchangeTouch]) -> String? {
        guard !touches.isEmpty, let data = try? touchEncoder.encode(touches) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    private static let touchEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// The text of `body` the index reads: its first `length` bytes when it is text; else, when it came whole in a content
    /// coding Kiosk undoes (`headers`' Content-Encoding: gzip, deflate, br, as most APIs answer), the indexed part of its
    /// decoded content, so that its words are found as the console shows them; nil when it has no text.
    static func indexedText(of body: CapturedBody?, length: Int?, headers: [RequestRecord.HeaderField]) -> Data? {
        guard let body else { return nil }
        if let length { return body.data.prefix(length) }
        let coding = RequestRecord.HeaderField.combined("Content-Encoding", in: headers)
        let (decoded, decodedFrom) = body.decoded(contentEncoding: coding)
        guard decodedFrom != nil, let decodedLength = indexedTextLength(of: decoded.data) else { return nil }
        return decoded.data.prefix(decodedLength)
    }

    /// How many leading bytes of `data` (a body) are indexed: up to `maxIndexedBodyBytes`, cut before a
    /// character that does not fit, or nil when the body is empty or not UTF-8 text (an image).
    static func indexedTextLength(of data: Data?) -> Int? {
        guard let data, !data.isEmpty else { return nil }
        return data.withUnsafeBytes { bytes -> Int? in
            var end = min(bytes.count, maxIndexedBodyBytes)
            // Find the lead byte of the last character before `end` (at most 3 continuation bytes
            // back); if that character needs more bytes than remain, it was cut by the cap or by
            // the capture limit, and the text ends before it.
            var lead = end - 1
            while lead > 0, lead > end - 4, bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
            let byte = bytes[lead]
            let length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            if lead + length > end { end = lead }
            guard end > 0,
                  String(validating: UnsafeRawBufferPointer(rebasing: bytes[..<end]), as: UTF8.self) != nil
            else { return nil }
            return end
        }
    }

    // MARK: - The full-text index

    /// The highest record id the full-text index holds; the records above it are not indexed yet.
    static func indexedThrough(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT indexedThrough FROM logStats WHERE id = 1")) ?? 0
    }

    /// Whether stored records wait to be indexed.
    static func hasUnindexedRecords(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: """
            SELECT EXISTS (SELECT 1 FROM logEntry WHERE id > (SELECT indexedThrough FROM logStats WHERE id = 1))
            """)) ?? false
    }

    /// Adds the oldest stored records not indexed yet, at most `maximum` (all of them when nil), to the
    /// full-text index's open segment within the caller's transaction, closing it once it holds its share of a log of
    /// `maxBytes`; returns whether more still wait.
    static func indexStoredRecords(maximum: Int?, maxBytes: Int64, _ db: Database) throws -> Bool {
        let through = try indexedThrough(db)
        let ids = try Int64.fetchAll(db.cachedStatement(sql: """
            SELECT id FROM logEntry WHERE id > ? ORDER BY id LIMIT ?
            """), arguments: [through, maximum.map { $0 + 1 } ?? -1])
        let batch = maximum.map { ids.prefix($0) } ?? ids[...]
        guard let first = batch.first, let last = batch.last else { return false }
        let (segment, records) = try openSegment(from: first, db)
        // One statement for the whole batch: FTS5's cost is mostly per statement and commit, which is why
        // records are indexed a burst at a time.
        // Made for this pass, not cached: the open segment changes (the writer's cache is cleared by the DDL anyway).
        try db.makeStatement(sql: """
            INSERT INTO \(segment.table) (rowid, text) SELECT id, text FROM logSearchText WHERE id > ? AND id <= ?
            """).execute(arguments: [through, last])
        try fill(segment, records: records + batch.count, maxBytes: maxBytes, db)
        try db.cachedStatement(sql: "UPDATE logStats SET indexedThrough = ? WHERE id = 1").execute(arguments: [last])
        return ids.count > batch.count
    }

    // MARK: - Size accounting

    /// The running sum of the stored records' `byteCount`.
    static func storedBytes(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT byteCount FROM logStats WHERE id = 1")) ?? 0
    }

    private static func addStoredBytes(_ bytes: Int64, _ db: Database) throws {
        guard bytes != 0 else { return }
        try db.cachedStatement(sql: "UPDATE logStats SET byteCount = MAX(0, byteCount + ?) WHERE id = 1")
            .execute(arguments: [bytes])
    }

    // MARK: - Eviction

    /// Deletes the records that started more than `maxAge` ago, within the caller's transaction.
    ///
    /// By `startedAt` rather than by id: a long request is logged after shorter ones that started
    /// later, so ids are only roughly in time order. The index on `startedAt` keeps every statement
    /// a range read, and the statements stream: memory grows only with the distinct bodies expiring.
    func evictExpired(_ db: Database) throws {
        let cutoff = configuration.now().addingTimeInterval(-configuration.maxAge).timeIntervalSinceReferenceDate
        var released = ReleasedBodies()
        var freed: Int64 = 0
        var any = false
        do {
            let expired = try Row.fetchCursor(db, sql: "SELECT byteCount, bodyID FROM logEntry WHERE startedAt < ?",
                                              arguments: [cutoff])
            while let row = try expired.next() {
                any = true
                freed += row[0] as Int64
                if let bodyID: Int64 = row[1] { freed += try released.release(bodyID, db) }
            }
        }
        guard any else { return }
        try released.apply(db)
        try db.execute(sql: "DELETE FROM logEntry WHERE startedAt < ?", arguments: [cutoff])
        try Self.addStoredBytes(-freed, db)
        try Self.dropEmptiedSegments(db)
    }

    /// Over `maxBytes`, deletes the oldest records (one id range) until the stored size is at most
    /// 90% of it, within the caller's transaction.
    func evictOversized(_ db: Database) throws {
        let limit = max(0, configuration.maxBytes)
        let total = try Self.storedBytes(db)
        guard total > limit else { return }
        let target = limit - limit / 10
        var freed: Int64 = 0
        var boundary: Int64?
        var released = ReleasedBodies()
        do {
            // Only ids, sizes and body references, streamed: memory grows only with the distinct bodies that go.
            let oldest = try Row.fetchCursor(db, sql: "SELECT id, byteCount, bodyID FROM logEntry ORDER BY id")
            while total - freed > target, let row = try oldest.next() {
                boundary = row[0]
                freed += row[1] as Int64
                if let bodyID: Int64 = row[2] { freed += try released.release(bodyID, db) }
            }
        }
        guard let boundary else {
            // Nothing left to delete: the running total drifted, so start it again from the rows.
            try db.execute(sql: """
                UPDATE logStats SET byteCount = (SELECT COALESCE(SUM(byteCount), 0) FROM logEntry)
                                              + (SELECT COALESCE(SUM(size), 0) FROM logBody)
                """)
            return
        }
        try released.apply(db)
        try db.execute(sql: "DELETE FROM logEntry WHERE id <= ?", arguments: [boundary])
        try Self.addStoredBytes(-freed, db)
        try Self.dropEmptiedSegments(db)
    }

    /// The stored bodies losing references in one eviction: each deleted with its last record, its bytes freed then,
    /// and kept with fewer references while a newer record still carries it.
    private struct ReleasedBodies {
        /// Per body, the references it holds and its size, then how many of them go.
        private var bodies: [Int64: (refs: Int64, size: Int64, going: Int64)] = [:]

        /// Notes that one record carrying `bodyID` goes; returns the bytes freed by it: the body's size when it was
        /// the body's last record, else 0.
        mutating func release(_ bodyID: Int64, _ db: Database) throws -> Int64 {
            var body: (refs: Int64, size: Int64, going: Int64)
            if let known = bodies[bodyID] {
                body = known
            } else {
                // A body missing (a file edited by hand) frees nothing and is left alone.
                guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT refs, size FROM logBody WHERE id = ?"),
                                                 arguments: [bodyID]) else { return 0 }
                body = (row[0], row[1], 0)
            }
            body.going += 1
            bodies[bodyID] = body
            return body.going == body.refs ? body.size : 0
        }

        /// Deletes the bodies whose every record goes and takes the going references off the others, within the
        /// caller's transaction (before the records go).
        func apply(_ db: Database) throws {
            let delete = try db.cachedStatement(sql: "DELETE FROM logBody WHERE id = ?")
            let dereference = try db.cachedStatement(sql: "UPDATE logBody SET refs = refs - ? WHERE id = ?")
            for (id, body) in bodies {
                if body.going >= body.refs {
                    try db.executeRaw(delete) { $0.bind(id) }
                } else {
                    try db.executeRaw(dereference) { values in
                        values.bind(body.going)
                        values.bind(id)
                    }
                }
            }
        }
    }

    /// Deletes every record and returns the freed pages to the disk, within the caller's transaction.
    static func deleteAll(_ db: Database) throws {
        try dropAllSegments(db)
        try db.execute(sql: "DELETE FROM logBody")
        try db.execute(sql: "DELETE FROM logEntry")
        try db.execute(sql: "UPDATE logStats SET byteCount = 0")
        try db.execute(sql: "PRAGMA incremental_vacuum")
    }
}
