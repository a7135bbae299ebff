/// Calendar arithmetic for the generated timestamps.
///
/// The data must be byte-identical on every run and machine, so dates are computed from fixed Unix
/// times with the proleptic Gregorian algorithm (Howard Hinnant's `civil_from_days`) instead of
/// `Date()`, time zones or locale-dependent formatters.
struct CivilTime: Sendable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// The UTC calendar time of `unixSeconds`.
    init(unixSeconds: Int) {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondsOfDay = unixSeconds - days * 86_400
        hour = secondsOfDay / 3600
        minute = secondsOfDay % 3600 / 60
        second = secondsOfDay % 60

        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Unix seconds of a UTC calendar time (inverse of `init(unixSeconds:)`).
    static func unixSeconds(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3600 + minute * 60 + second
    }

    /// "YYYY-MM-DD".
    var date: String { "\(Self.pad(year, 4))-\(Self.pad(month))-\(Self.pad(day))" }
    /// "HH:MM:SS".
    var time: String { "\(Self.pad(hour)):\(Self.pad(minute)):\(Self.pad(second))" }

    static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

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
