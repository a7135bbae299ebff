public import Foundation

/// The addresses and keys of an upstream that serves every catalog (the embedded demo upstream), as
/// `KioskConfiguration.use` points Kiosk at them.
public struct UpstreamEndpoints: Sendable, Hashable {
    public var nytBaseURL: URL
    public var nytAPIKey: String
    public var marvelBaseURL: URL
    public var marvelPublicKey: String
    public var marvelPrivateKey: String
    public var rickAndMortyBaseURL: URL
    public var dogsURL: URL

    /// Every address and key of such an upstream.
    public init(nytBaseURL: URL, nytAPIKey: String, marvelBaseURL: URL, marvelPublicKey: String, marvelPrivateKey: String,
                rickAndMortyBaseURL: URL, dogsURL: URL) {
        self.nytBaseURL = nytBaseURL
        self.nytAPIKey = nytAPIKey
        self.marvelBaseURL = marvelBaseURL
        self.marvelPublicKey = marvelPublicKey
        self.marvelPrivateKey = marvelPrivateKey
        self.rickAndMortyBaseURL = rickAndMortyBaseURL
        self.dogsURL = dogsURL
    }
}
