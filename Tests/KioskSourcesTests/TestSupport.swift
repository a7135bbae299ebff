import Foundation
import KioskCore
import KioskSources
import Testing

/// A fixed instant, so Marvel's `ts` and hash are known in advance.
let fixedDate = Date(timeIntervalSince1970: 1_700_000_000)

/// A configuration with every key set and a frozen clock; tests remove what they need to be missing.
func testConfiguration(
    nytAPIKey: String? = "nyt-test-key",
    marvelPublicKey: String? = "marvel-public-key",
    marvelPrivateKey: String? = "marvel-private-key",
    dogsURL: URL? = URL(string: "https://jsonblob.example/api/jsonBlob/1234")
) -> SourceConfiguration {
    SourceConfiguration(
        dogsURL: dogsURL,
        nytAPIKey: nytAPIKey,
        marvelPublicKey: marvelPublicKey,
        marvelPrivateKey: marvelPrivateKey,
        now: { fixedDate }
    )
}

/// An upstream response with a JSON (or not) body given as text.
func response(
    _ status: Int = 200,
    _ body: String,
    url: String = "https://upstream.example/",
    headers: HTTPHeaderFields = ["Content-Type": "application/json"]
) -> HTTPResponse {
    HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: URL(string: url)!)
}

/// The decoded query parameters of a URL, in order, as the upstream server would read them.
func queryParameters(_ url: URL) -> [(name: String, value: String)] {
    let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    return (components?.queryItems ?? []).map { (name: $0.name, value: $0.value ?? "") }
}

/// The value of one decoded query parameter.
func queryValue(_ url: URL, _ name: String) -> String? {
    queryParameters(url).first { $0.name == name }?.value
}

/// Runs `body` and returns the KioskError it throws (recording a failure when it throws nothing or something else).
func kioskError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> KioskError? {
    do {
        try body()
        Issue.record("expected a KioskError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as KioskError {
        return error
    } catch {
        Issue.record("expected a KioskError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// Typed access to the source-specific detail, nil when the item is from another catalog.
extension CatalogItem {
    var article: Article? { if case .article(let value) = detail { value } else { nil } }
    var marvel: MarvelCharacter? { if case .marvelCharacter(let value) = detail { value } else { nil } }
    var rickAndMorty: RickAndMortyCharacter? { if case .rickAndMorty(let value) = detail { value } else { nil } }
    var dog: Dog? { if case .dog(let value) = detail { value } else { nil } }
}
