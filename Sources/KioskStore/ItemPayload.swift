import Foundation
import KioskCore

/// The JSON form of a `CatalogItem` stored in `item.payload`.
enum ItemPayload {
    // Sorted keys make equal items encode to equal bytes, so an upsert of unchanged content can
    // be detected with a blob comparison and skipped (no full-text reindexing on every refresh).
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    private static let decoder = JSONDecoder()

    static func encode(_ item: CatalogItem) throws -> Data {
        try encoder.encode(item)
    }

    /// Decodes every payload, or returns nil when any of them cannot be decoded.
    ///
    /// The payloads are spliced into one JSON array and decoded in a single call: one decoder
    /// pass instead of one per item is what keeps reading a 20-item page well under a millisecond.
    static func decodeAll(_ payloads: [Data]) -> [CatalogItem]? {
        if payloads.isEmpty { return [] }
        if let items = try? decoder.decode([CatalogItem].self, from: joined(payloads)) { return items }
        // Slow path: find out whether one item is bad (the splice itself cannot be wrong).
        var items: [CatalogItem] = []
        items.reserveCapacity(payloads.count)
        for payload in payloads {
            guard let item = try? decoder.decode(CatalogItem.self, from: payload) else { return nil }
            items.append(item)
        }
        return items
    }

    /// Decodes the payloads, skipping any that cannot be decoded (e.g. written by a newer Kiosk):
    /// lists built from many pages should still show what they can.
    static func decodeEach(_ payloads: [Data]) -> [CatalogItem] {
        if payloads.isEmpty { return [] }
        if let items = try? decoder.decode([CatalogItem].self, from: joined(payloads)) { return items }
        return payloads.compactMap { try? decoder.decode(CatalogItem.self, from: $0) }
    }

    private static func joined(_ payloads: [Data]) -> Data {
        var buffer = Data()
        buffer.reserveCapacity(payloads.reduce(2 + payloads.count) { $0 + $1.count })
        buffer.append(UInt8(ascii: "["))
        for (index, payload) in payloads.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            buffer.append(payload)
        }
        buffer.append(UInt8(ascii: "]"))
        return buffer
    }
}
