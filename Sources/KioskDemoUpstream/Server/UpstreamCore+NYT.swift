import HTTPTypes

extension UpstreamCore {
    private static let nytPrefix = "/svc/mostpopular/v2/"

    /// `GET /svc/mostpopular/v2/{emailed|viewed|shared}/{1|7|30}.json` and
    /// `/shared/{period}/{email|facebook|twitter}.json`.
    func nyt(path: String, query: QueryItems, base: String) -> Reply {
        // The key is checked before the path, as NYT's gateway does: a bad key gets 401 on any path.
        guard let key = query["api-key"], key == keys.nyt else {
            return .error(.unauthorized, Documents.nytFault("Invalid ApiKey", code: "oauth.v2.InvalidApiKey"))
        }
        guard path.hasPrefix(Self.nytPrefix), let list = Self.nytList(path.dropFirst(Self.nytPrefix.count)) else {
            return .error(.notFound, Documents.nytFault("Resource not found", code: "messaging.adaptors.http.flow.ApplicationNotFound"))
        }
        return cache.reply(for: "nyt|\(list.kind)|\(list.period)|\(list.shareType ?? "")") {
            .json(.ok, Documents.nytList(kind: list.kind, period: list.period, shareType: list.shareType, base: base),
                  cacheControl: Reply.Lifetime.nyt)
        }
    }

    /// Parses `kind/period.json` or `shared/period/type.json`; nil for anything else.
    private static func nytList(_ rest: Substring) -> (kind: String, period: Int, shareType: String?)? {
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        func period(_ text: Substring) -> Int? {
            Int(text).flatMap { NYTCatalog.periods.contains($0) ? $0 : nil }
        }
        func stripJSON(_ text: Substring) -> Substring? {
            text.hasSuffix(".json") ? text.dropLast(5) : nil
        }
        switch parts.count {
        case 2:
            guard NYTCatalog.kinds.contains(String(parts[0])), let file = stripJSON(parts[1]),
                  let period = period(file) else { return nil }
            return (String(parts[0]), period, nil)
        case 3:
            guard parts[0] == "shared", let period = period(parts[1]), let file = stripJSON(parts[2]),
                  NYTCatalog.shareTypes.contains(String(file)) else { return nil }
            return ("shared", period, String(file))
        default:
            return nil
        }
    }
}
