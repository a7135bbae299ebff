import Foundation

/// The NYT Most Popular v2 endpoints Kiosk calls.
enum NYTimesEndpoints {
    /// `GET {base}/{kind}/{period}.json?api-key=K` — the 20 most emailed, viewed or shared articles.
    static func mostPopular(kind: String, period: String, apiKey: String) -> Endpoint {
        Endpoint(
            name: "nyt.mostpopular",
            path: [kind, "\(period).json"],
            query: [URLQueryItem(name: "api-key", value: apiKey)]
        )
    }
}
