import Crypto
import Foundation
import KioskCore

/// Marvel's per-request authentication: `ts`, `apikey` and `hash = md5(ts + privateKey + publicKey)`.
/// The private key only ever enters the hash; it is never sent.
struct MarvelAuth: Sendable, Hashable {
    var timestamp: String
    var publicKey: String
    var hash: String

    /// Signs with `date` as the timestamp (whole seconds since 1970, so a fixed clock gives a fixed URL).
    init(publicKey: String, privateKey: String, date: Date) {
        timestamp = String(Int64(date.timeIntervalSince1970.rounded(.down)))
        self.publicKey = publicKey
        let digest = Insecure.MD5.hash(data: Data((timestamp + privateKey + publicKey).utf8))
        hash = Hex.encode(digest)
    }

    /// `request` with this signature's `ts` and `hash` named as its secrets: with the public key they
    /// are a replayable credential, so they are scrubbed wherever an upstream echoes them.
    func marking(_ request: HTTPRequest) -> HTTPRequest {
        var marked = request
        marked.secrets.formUnion([timestamp, hash])
        return marked
    }

    /// `ts`, `apikey`, `hash`, in that order, appended to every Marvel request.
    var queryItems: [URLQueryItem] {
        [
            URLQueryItem(name: "ts", value: timestamp),
            URLQueryItem(name: "apikey", value: publicKey),
            URLQueryItem(name: "hash", value: hash),
        ]
    }
}

/// The Marvel Comics API v1 endpoints Kiosk calls.
enum MarvelEndpoints {
    /// Characters per page; Marvel allows up to 100 but 20 matches the other catalogs.
    static let pageSize = 20

    /// `GET {base}/characters?limit=20&offset=..&orderBy=name[&nameStartsWith=q]&ts=..&apikey=..&hash=..`.
    static func characters(page: Int, nameStartsWith query: String?, auth: MarvelAuth) -> Endpoint {
        var items = [
            URLQueryItem(name: "limit", value: String(pageSize)),
            URLQueryItem(name: "offset", value: String((page - 1) * pageSize)),
            URLQueryItem(name: "orderBy", value: "name"),
        ]
        if let query { items.append(URLQueryItem(name: "nameStartsWith", value: query)) }
        return Endpoint(name: "marvel.characters", path: ["characters"], query: items + auth.queryItems)
    }

    /// `GET {base}/characters/{id}?ts=..&apikey=..&hash=..`.
    static func character(id: String, auth: MarvelAuth) -> Endpoint {
        Endpoint(name: "marvel.character", path: ["characters", id], query: auth.queryItems)
    }
}
