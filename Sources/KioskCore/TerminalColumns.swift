/// How many columns a terminal gives text (wcwidth(3)'s rules, in short): two for East Asian wide and full-width
/// letters and for an emoji shown as a picture, none for a character that is only a mark or a format, one for the
/// rest. What lines up carets under a mistake and the columns of a table when text is not all Latin.
public enum TerminalColumns {
    /// The columns of one character (a grapheme: a letter with its marks, an emoji with its joiners, is one).
    public static func of(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        // An emoji drawn as a picture: by default, or asked so by the variation selector U+FE0F.
        if first.properties.isEmojiPresentation || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return isWide(first.value) ? 2 : 1
    }

    /// The columns of `text`.
    public static func of<Text: StringProtocol>(_ text: Text) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` with spaces after it to fill `columns` (as it is when it takes them already).
    public static func padded(_ text: String, to columns: Int) -> String {
        text + String(repeating: " ", count: max(0, columns - of(text)))
    }

    /// `text` cut to at most `columns`, ending in an ellipsis when it was cut.
    public static func clipped(_ text: String, to columns: Int) -> String {
        guard of(text) > columns else { return text }
        var kept = ""
        var used = 0
        for character in text {
            let width = of(character)
            guard used + width <= max(0, columns - 1) else { break }
            kept.append(character)
            used += width
        }
        return kept + "…"
    }

    /// The East Asian Wide and Fullwidth blocks (Unicode's EastAsianWidth.txt, W and F, by block).
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
             0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD,
             0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
