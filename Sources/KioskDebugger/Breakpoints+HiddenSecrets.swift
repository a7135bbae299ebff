import Foundation
import KioskCore

// A paused request's body as edited in the console, which showed it redacted: what the user left as shown goes as the
// request had it, secrets and all — as a header line left as shown does.
extension Breakpoints {
    /// The body to send for `edited`, an edit of a request body whose `original` was `shown` redacted (see
    /// `restoringHiddenSecrets(in:shown:ofPaused:)`).
    static func restoringHiddenSecrets(in edited: String, shown: String, original: Data) -> Data? {
        let placeholder = Redactor.placeholder
        guard edited.contains(placeholder) else { return Data(edited.utf8) }
        if let editedJSON = try? OrderedJSON.parse(edited), let shownJSON = try? OrderedJSON.parse(shown),
           let originalJSON = try? OrderedJSON.parse(original) {
            return merged(editedJSON, shown: shownJSON, original: originalJSON).map { Data($0.rendered(indent: nil).utf8) }
        }
        // A form: fields in the order the request had them, each shown as itself or with its value hidden.
        let shownPairs = shown.split(separator: "&", omittingEmptySubsequences: false)
        let originalPairs = String(decoding: original, as: UTF8.self).split(separator: "&", omittingEmptySubsequences: false)
        guard shownPairs.count == originalPairs.count else { return nil }
        var used = Set<Int>()
        var pairs: [Substring] = []
        for pair in edited.split(separator: "&", omittingEmptySubsequences: false) {
            guard pair.contains(placeholder) else {
                pairs.append(pair)
                continue
            }
            guard let index = shownPairs.indices.first(where: { !used.contains($0) && shownPairs[$0] == pair }) else { return nil }
            used.insert(index)
            pairs.append(originalPairs[index])
        }
        return Data(pairs.joined(separator: "&").utf8)
    }

    /// `edited` with every part left as `shown` taken from `original` (where the same path holds it); nil when
    /// `<redacted>` stands in a part that was changed.
    private static func merged(_ edited: OrderedJSON, shown: OrderedJSON?, original: OrderedJSON?) -> OrderedJSON? {
        if let shown, let original, edited == shown { return original }
        switch edited {
        case .object(let members):
            let shownMembers = Self.members(of: shown), originalMembers = Self.members(of: original)
            var result: [(key: String, value: OrderedJSON)] = []
            for member in members {
                guard let value = merged(member.value, shown: shownMembers.first { $0.key == member.key }?.value,
                                         original: originalMembers.first { $0.key == member.key }?.value) else { return nil }
                result.append((member.key, value))
            }
            return .object(result)
        case .array(let items):
            let shownItems = Self.items(of: shown), originalItems = Self.items(of: original)
            var result: [OrderedJSON] = []
            for (index, item) in items.enumerated() {
                // An item deleted or added moves the rest: one is then paired only with the one shown item it equals (two
                // shown alike could hide two different secrets), never with another item's secrets at its old place.
                let pair: Int?
                if items.count == shownItems.count {
                    pair = index
                } else {
                    let alike = shownItems.indices.filter { shownItems[$0] == item }
                    pair = alike.count == 1 ? alike[0] : nil
                }
                guard let value = merged(item, shown: pair.map { shownItems[$0] },
                                         original: pair.flatMap { originalItems.indices.contains($0) ? originalItems[$0] : nil }) else { return nil }
                result.append(value)
            }
            return .array(result)
        case .string(let text):
            return text.contains(Redactor.placeholder) ? nil : edited
        case .number, .bool, .null:
            return edited
        }
    }

    /// An object's members, none for anything else.
    private static func members(of value: OrderedJSON?) -> [(key: String, value: OrderedJSON)] {
        guard case .object(let members)? = value else { return [] }
        return members
    }

    /// An array's items, none for anything else.
    private static func items(of value: OrderedJSON?) -> [OrderedJSON] {
        guard case .array(let items)? = value else { return [] }
        return items
    }
}
