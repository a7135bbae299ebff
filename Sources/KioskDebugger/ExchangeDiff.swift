import Foundation
public import KioskCore

// Comparing two exchanges, as a developer asks "what changed in this answer?": the status, the timing,
// the headers by name, and the body — a JSON body path by path (objects by key, in the newer answer's
// order; arrays by index), anything else line by line. Linear in the size of the bodies: each object's
// keys are looked up through a dictionary, never searched, so two 1 MB answers compare in milliseconds.

/// The differences between two logged exchanges, the older (`before`) first.
public struct ExchangeDiff: Sendable, Hashable {
    /// One difference in a JSON body, at its path (`$.results[0].name`).
    public enum Change: Sendable, Hashable {
        /// Only the newer body has this value here.
        case added(path: String, value: OrderedJSON)
        /// Only the older body had this value here.
        case removed(path: String, value: OrderedJSON)
        /// Both have a value here, and they differ (scalars, or values of different kinds).
        case changed(path: String, old: OrderedJSON, new: OrderedJSON)

        /// Where the difference is.
        public var path: String {
            switch self {
            case .added(let path, _), .removed(let path, _), .changed(let path, _, _): path
            }
        }
    }

    /// One header that differs: nil on the side that does not have it.
    public struct HeaderChange: Sendable, Hashable {
        public var name: String
        public var old: String?
        public var new: String?
    }

    /// One line of a text comparison of bodies that are not both JSON.
    public enum Line: Sendable, Hashable {
        case same(String)
        case removed(String)
        case added(String)
    }

    /// How the bodies compare.
    public enum Body: Sendable, Hashable {
        /// The same bytes (or both absent).
        case identical
        /// Both JSON: the changes by path, at most `limit` (`truncated` says more were found).
        case json([Change], truncated: Bool)
        /// Otherwise: the lines around and of the changed part (common head and tail lines are counted,
        /// not listed).
        case text([Line], commonPrefix: Int, commonSuffix: Int, truncated: Bool)
    }

    public var before: RequestRecord
    public var after: RequestRecord
    /// Headers of either response that differ, in the newer response's order, then those only the older had.
    public var responseHeaders: [HeaderChange]
    public var body: Body

    /// Compares two whole records (with their bodies); at most `limit` body changes or lines are listed.
    public init(before: RequestRecord, after: RequestRecord, limit: Int = 2000) {
        self.before = before
        self.after = after
        responseHeaders = Self.headerChanges(before.responseHeaders, after.responseHeaders)
        body = Self.compareBodies(before.responseBody?.data ?? Data(), after.responseBody?.data ?? Data(), limit: limit)
    }

    // MARK: Bodies

    static func compareBodies(_ old: Data, _ new: Data, limit: Int) -> Body {
        if old == new { return .identical }
        if let oldJSON = try? OrderedJSON.parse(old), let newJSON = try? OrderedJSON.parse(new) {
            var changes: [Change] = []
            var truncated = false
            compare(oldJSON, newJSON, path: "$", into: &changes, limit: limit, truncated: &truncated)
            return .json(changes, truncated: truncated)
        }
        return textDiff(String(decoding: old, as: UTF8.self), String(decoding: new, as: UTF8.self), limit: limit)
    }

    /// The path-level changes from `old` to `new` under `path`, appended to `changes` up to `limit`.
    public static func compare(_ old: OrderedJSON, _ new: OrderedJSON, path: String, into changes: inout [Change], limit: Int,
                               truncated: inout Bool) {
        func record(_ change: Change) {
            if changes.count < limit { changes.append(change) } else { truncated = true }
        }
        switch (old, new) {
        case (.object(let oldMembers), .object(let newMembers)):
            // Duplicate keys (legal JSON, rare): the last one counts, as most readers do.
            var oldByKey: [String: OrderedJSON] = [:], newByKey: [String: OrderedJSON] = [:]
            oldByKey.reserveCapacity(oldMembers.count)
            newByKey.reserveCapacity(newMembers.count)
            for member in oldMembers { oldByKey[member.key] = member.value }
            for member in newMembers { newByKey[member.key] = member.value }
            var seen = Set<String>()
            seen.reserveCapacity(newMembers.count)
            for member in newMembers where seen.insert(member.key).inserted {
                let childPath = path + component(member.key)
                let value = newByKey[member.key] ?? member.value
                if let previous = oldByKey[member.key] {
                    compare(previous, value, path: childPath, into: &changes, limit: limit, truncated: &truncated)
                } else {
                    record(.added(path: childPath, value: value))
                }
                if truncated { return }
            }
            for member in oldMembers where !seen.contains(member.key) && seen.insert(member.key).inserted {
                record(.removed(path: path + component(member.key), value: member.value))
            }
        case (.array(let oldValues), .array(let newValues)):
            for index in 0..<max(oldValues.count, newValues.count) {
                let childPath = path + "[\(index)]"
                if index >= oldValues.count {
                    record(.added(path: childPath, value: newValues[index]))
                } else if index >= newValues.count {
                    record(.removed(path: childPath, value: oldValues[index]))
                } else {
                    compare(oldValues[index], newValues[index], path: childPath, into: &changes, limit: limit, truncated: &truncated)
                }
                if truncated { return }
            }
        default:
            if !sameScalar(old, new) { record(.changed(path: path, old: old, new: new)) }
        }
    }

    /// Equal values; numbers by value when their texts differ (`1.0` and `1`), as JSON means them.
    static func sameScalar(_ old: OrderedJSON, _ new: OrderedJSON) -> Bool {
        if case .number(let a) = old, case .number(let b) = new, a != b, let x = Double(a), let y = Double(b) { return x == y }
        return old == new
    }

    /// `.name` for a key that reads as an identifier, else `["the key"]`.
    static func component(_ key: String) -> String {
        let isIdentifier = !key.isEmpty && !(key.first!.isNumber) && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        return isIdentifier ? "." + key : "[" + OrderedJSON.quoted(key) + "]"
    }

    /// Lines: the common head and tail are counted; the middle is shown as removed then added lines.
    static func textDiff(_ old: String, _ new: String, limit: Int) -> Body {
        let oldLines = old.split(separator: "\n", omittingEmptySubsequences: false)
        let newLines = new.split(separator: "\n", omittingEmptySubsequences: false)
        var prefix = 0
        while prefix < oldLines.count, prefix < newLines.count, oldLines[prefix] == newLines[prefix] { prefix += 1 }
        var suffix = 0
        while suffix < oldLines.count - prefix, suffix < newLines.count - prefix,
              oldLines[oldLines.count - 1 - suffix] == newLines[newLines.count - 1 - suffix] { suffix += 1 }
        var lines: [Line] = oldLines[prefix..<(oldLines.count - suffix)].map { .removed(String($0)) }
            + newLines[prefix..<(newLines.count - suffix)].map { .added(String($0)) }
        let truncated = lines.count > limit
        if truncated { lines.removeLast(lines.count - limit) }
        return .text(lines, commonPrefix: prefix, commonSuffix: suffix, truncated: truncated)
    }

    // MARK: Headers

    static func headerChanges(_ old: [RequestRecord.HeaderField], _ new: [RequestRecord.HeaderField]) -> [HeaderChange] {
        /// Values by lowercased name (repeated fields joined, as HTTP allows), with the name as first written.
        func grouped(_ fields: [RequestRecord.HeaderField]) -> (order: [String], values: [String: (name: String, value: String)]) {
            var order: [String] = []
            var values: [String: (name: String, value: String)] = [:]
            for field in fields {
                let key = field.name.lowercased()
                if let existing = values[key] {
                    values[key] = (existing.name, existing.value + ", " + field.value)
                } else {
                    order.append(key)
                    values[key] = (field.name, field.value)
                }
            }
            return (order, values)
        }
        let (oldOrder, oldValues) = grouped(old)
        let (newOrder, newValues) = grouped(new)
        var changes: [HeaderChange] = []
        for key in newOrder where oldValues[key]?.value != newValues[key]?.value {
            changes.append(HeaderChange(name: newValues[key]!.name, old: oldValues[key]?.value, new: newValues[key]?.value))
        }
        for key in oldOrder where newValues[key] == nil {
            changes.append(HeaderChange(name: oldValues[key]!.name, old: oldValues[key]?.value, new: nil))
        }
        return changes
    }
}
