import KioskCore

/// A partial `FaultSettings` as sent to `PUT /faults`: fields present replace the current values,
/// absent ones keep them, and `"sources": null` means all sources again.
///
/// Unknown field names are rejected rather than ignored: a typo such as `latencyMs` silently doing
/// nothing would make a fault test pass for the wrong reason.
struct FaultPatch: Decodable {
    var latencyMilliseconds: Int?
    var failureRate: Double?
    var rateLimitRate: Double?
    var retryAfterSeconds: Int?
    var truncateRate: Double?
    var malformedRate: Double?
    var badItemRate: Double?
    var offline: Bool?
    var echoCredentials: Bool?
    /// nil: not given; .some(nil): all sources; .some(set): only those.
    var sources: Set<SourceID>??

    static let fieldNames = ["latencyMilliseconds", "failureRate", "rateLimitRate", "retryAfterSeconds",
                             "truncateRate", "malformedRate", "badItemRate", "offline", "echoCredentials", "sources"]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        for key in container.allKeys {
            switch key.stringValue {
            case "latencyMilliseconds": latencyMilliseconds = try container.decode(Int.self, forKey: key)
            case "failureRate": failureRate = try container.decode(Double.self, forKey: key)
            case "rateLimitRate": rateLimitRate = try container.decode(Double.self, forKey: key)
            case "retryAfterSeconds": retryAfterSeconds = try container.decode(Int.self, forKey: key)
            case "truncateRate": truncateRate = try container.decode(Double.self, forKey: key)
            case "malformedRate": malformedRate = try container.decode(Double.self, forKey: key)
            case "badItemRate": badItemRate = try container.decode(Double.self, forKey: key)
            case "offline": offline = try container.decode(Bool.self, forKey: key)
            case "echoCredentials": echoCredentials = try container.decode(Bool.self, forKey: key)
            case "sources":
                if try container.decodeNil(forKey: key) {
                    sources = .some(nil)
                } else {
                    let names = try container.decode([String].self, forKey: key)
                    var set = Set<SourceID>()
                    for name in names {
                        guard let source = SourceID(rawValue: name) ?? SourceID(userInput: name) else {
                            throw DecodingError.dataCorruptedError(
                                forKey: key, in: container,
                                debugDescription: "unknown source \"\(name)\"; known sources: \(SourceID.allCases.map(\.rawValue).joined(separator: ", "))")
                        }
                        set.insert(source)
                    }
                    sources = .some(set)
                }
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container,
                    debugDescription: "unknown field \"\(key.stringValue)\"; known fields: \(Self.fieldNames.joined(separator: ", "))")
            }
        }
    }

    /// `current` with this patch's fields replaced.
    func applied(to current: FaultSettings) -> FaultSettings {
        var result = current
        if let latencyMilliseconds { result.latencyMilliseconds = latencyMilliseconds }
        if let failureRate { result.failureRate = failureRate }
        if let rateLimitRate { result.rateLimitRate = rateLimitRate }
        if let retryAfterSeconds { result.retryAfterSeconds = retryAfterSeconds }
        if let truncateRate { result.truncateRate = truncateRate }
        if let malformedRate { result.malformedRate = malformedRate }
        if let badItemRate { result.badItemRate = badItemRate }
        if let offline { result.offline = offline }
        if let echoCredentials { result.echoCredentials = echoCredentials }
        if let sources { result.sources = sources }
        return result
    }
}
