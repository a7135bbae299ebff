public import Foundation
public import KioskCore

// The entirety of KioskSources' public API: the configuration, the factory and the four source types.
// Everything else in this module (endpoints, DTOs, decoding helpers) is internal.

/// Where the four upstreams live and the keys to reach them; every URL is configurable (mirror, proxy, demo).
public struct SourceConfiguration: Sendable {
    /// New York Times Most Popular v2 base, e.g. `https://api.nytimes.com/svc/mostpopular/v2`.
    public var nytBaseURL: URL
    /// Marvel Comics API base, e.g. `https://gateway.marvel.com/v1/public`.
    public var marvelBaseURL: URL
    /// Rick and Morty API base, e.g. `https://rickandmortyapi.com/api`.
    public var rickAndMortyBaseURL: URL
    /// The dogs JSON document; it has no public default, so nil makes every dogs request fail clearly.
    public var dogsURL: URL?
    /// NYT `api-key`; nil makes NYT requests throw `KioskError.unauthorized` instead of going out keyless.
    public var nytAPIKey: String?
    /// Marvel public key (`apikey`); both Marvel keys are needed.
    public var marvelPublicKey: String?
    /// Marvel private key, only ever used inside the request hash, never sent.
    public var marvelPrivateKey: String?
    /// The clock Marvel's `ts` and `Retry-After` dates are read from (injected for deterministic tests).
    public var now: @Sendable () -> Date

    /// Creates a configuration; omitted values take the public defaults of `live`.
    public init(
        nytBaseURL: URL = SourceConfiguration.defaultNYTBaseURL,
        marvelBaseURL: URL = SourceConfiguration.defaultMarvelBaseURL,
        rickAndMortyBaseURL: URL = SourceConfiguration.defaultRickAndMortyBaseURL,
        dogsURL: URL? = nil,
        nytAPIKey: String? = nil,
        marvelPublicKey: String? = nil,
        marvelPrivateKey: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.nytBaseURL = nytBaseURL
        self.marvelBaseURL = marvelBaseURL
        self.rickAndMortyBaseURL = rickAndMortyBaseURL
        self.dogsURL = dogsURL
        self.nytAPIKey = nytAPIKey
        self.marvelPublicKey = marvelPublicKey
        self.marvelPrivateKey = marvelPrivateKey
        self.now = now
    }

    /// The real upstreams, no keys and no dogs URL.
    public static let live = SourceConfiguration()

    /// `https://api.nytimes.com/svc/mostpopular/v2`.
    public static let defaultNYTBaseURL = URL(string: "https://api.nytimes.com/svc/mostpopular/v2")!
    /// `https://gateway.marvel.com/v1/public`.
    public static let defaultMarvelBaseURL = URL(string: "https://gateway.marvel.com/v1/public")!
    /// `https://rickandmortyapi.com/api`.
    public static let defaultRickAndMortyBaseURL = URL(string: "https://rickandmortyapi.com/api")!
}

/// The factory for the catalog sources.
public enum Sources {
    /// One source per `SourceID`, all reading the same configuration (a fifth API adds a line here, and more:
    /// see `KioskCore/SourceTraits.swift`).
    public static func make(_ configuration: SourceConfiguration) -> [SourceID: any CatalogSource] {
        [
            .nyt: NYTimesSource(configuration: configuration),
            .marvel: MarvelSource(configuration: configuration),
            .rickandmorty: RickAndMortySource(configuration: configuration),
            .dogs: DogsSource(configuration: configuration),
        ]
    }
}
