extension String {
    /// A URL slug: lowercase ASCII letters and digits joined by single hyphens.
    var slug: String {
        var out = ""
        var pendingHyphen = false
        for scalar in unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                if pendingHyphen, !out.isEmpty { out.append("-") }
                pendingHyphen = false
                out.unicodeScalars.append(scalar.properties.lowercaseMapping.unicodeScalars.first ?? scalar)
            } else {
                pendingHyphen = true
            }
        }
        return out
    }

    /// The string with its first character uppercased ("the Housing Market" -> "The Housing Market").
    var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }

    /// Headline capitalisation of a phrase: every word capitalised except short function words
    /// (the headline's own first letter is capitalised separately, wherever the phrase lands).
    var titleCased: String {
        let minor: Set<String> = ["a", "an", "and", "at", "by", "for", "in", "of", "on", "or", "the", "to"]
        return split(separator: " ").map { word in
            minor.contains(String(word)) ? String(word) : String(word).capitalizedFirst
        }.joined(separator: " ")
    }
}
