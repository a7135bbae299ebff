import Foundation
import KioskCore

/// Checks shared by every source's `normalize`, `listRequest` and `detailRequest`.
enum RequestValidation {
    /// Rejects a request meant for another catalog and a page below 1.
    static func checkBasics(_ request: PageRequest, source: SourceID) throws {
        guard request.source == source else {
            throw KioskError.invalidRequest("A \(request.source.rawValue) request was sent to the \(source.rawValue) source")
        }
        guard request.page >= 1 else {
            throw KioskError.invalidRequest("Page numbers start at 1; got page \(request.page)")
        }
    }

    /// Refuses any page but the first, for catalogs that are one document: a page past the last is not found (404).
    static func requireSinglePage(_ request: PageRequest, description: String) throws {
        guard request.page == 1 else {
            throw KioskError.notFound("\(description); there is no page \(request.page)")
        }
    }

    /// Lowercased, trimmed filters checked against `allowed` (names and values case-insensitive);
    /// a blank value means "not set" and is dropped, defaults fill in what is left unset.
    static func normalizedFilters(
        _ filters: [String: String],
        allowed: [String: [String]],
        defaults: [String: String] = [:],
        source: SourceID
    ) throws -> [String: String] {
        var result: [String: String] = [:]
        for (rawName, rawValue) in filters {
            let name = rawName.trimmingCharacters(in: .whitespaces).lowercased()
            let value = rawValue.trimmingCharacters(in: .whitespaces).lowercased()
            guard let values = allowed[name] else {
                let names = allowed.keys.sorted()
                let valid = names.isEmpty ? "it takes no filters" : "valid filters: \(names.joined(separator: ", "))"
                throw KioskError.invalidRequest("Unknown filter \"\(rawName)\" for \(source.displayName); \(valid)")
            }
            if value.isEmpty { continue }
            guard values.contains(value) else {
                throw KioskError.invalidRequest(
                    "Invalid \(name) \"\(rawValue)\" for \(source.displayName); valid values: \(values.joined(separator: ", "))"
                )
            }
            result[name] = value
        }
        for (name, value) in defaults where result[name] == nil { result[name] = value }
        return result
    }

    /// An item ID that must be a positive decimal number (it becomes a path segment upstream).
    static func numericID(_ itemID: String, what: String) throws -> String {
        let trimmed = itemID.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 18, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw KioskError.invalidRequest("\(what) IDs are numbers; got \"\(itemID)\"")
        }
        return trimmed
    }

    /// A configured secret, or nil when it is absent or blank (a blank key must not be sent either).
    static func secret(_ value: String?) -> String? {
        guard let trimmed = value?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else { return nil }
        return trimmed
    }
}
