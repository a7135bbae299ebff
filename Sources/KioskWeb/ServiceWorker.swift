import Foundation
import Hummingbird
import KioskCore

/// `/sw.js`: the service worker that keeps Kiosk readable when the Kiosk server itself is unreachable. It is
/// `Resources/sw.js` behind a one-line prelude naming this build's app shell — the content-addressed assets
/// to precache, the pages of the shell, and a version computed from all of it. Any change to the shell changes
/// the script's bytes, which is how a browser learns there is a new version (and offers "New version — Reload").
/// Served at the root, so its scope is the whole site; never cached by HTTP, so an update is seen at once.
enum ServiceWorker {
    /// Where pages register it.
    static let path = Route.serviceWorker.path

    /// The served bytes and their validator, for one app's shell (its routes script is part of it).
    struct Script: Sendable {
        /// The shell's version: the fingerprint of the worker's source and of every precached address.
        let version: String
        /// The content-addressed files of the shell (route table, stylesheet, scripts, icons).
        let assets: [String]
        /// The shell's pages, fetched anew for each version: the home page (what an installed app opens on),
        /// the offline page and the manifest.
        let pages: [String]
        let body: ByteBuffer
        let etag: String

        init(client: StaticAsset) {
            let source = StaticAssets.resource("sw.js")
            assets = [client, StaticAssets.stylesheet, StaticAssets.script, StaticAssets.deviceScript, StaticAssets.offlineScript,
                      StaticAssets.icon192, StaticAssets.icon512, StaticAssets.maskableIcon192, StaticAssets.maskableIcon512,
                      StaticAssets.appleTouchIcon].map(\.path)
            pages = [Route.home.path, Route.offline.path, WebManifest.path]
            version = Fingerprint.hex(source + Array((assets + pages).joined(separator: "\n").utf8))
            let shell = Shell(version: version, assets: assets, pages: pages, clientScript: client.path,
                              deviceScript: StaticAssets.deviceScript.path)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // The values are Kiosk's own paths and hex digits: JSON is a valid JavaScript expression for them.
            let json = (try? encoder.encode(shell)).map { Array($0) } ?? Array("{}".utf8)
            let bytes = Array("self.kioskShell = ".utf8) + json + Array(";\n".utf8) + source
            body = ByteBuffer(bytes: bytes)
            etag = "\"" + Fingerprint.hex(bytes) + "\""
        }

        /// `GET /sw.js`: the script, or 304 when the browser has this version. `no-cache` rather than a lifetime:
        /// browsers cap a worker's HTTP freshness at a day anyway, and a new version must be found on the next visit.
        func response(request: Request) -> Response {
            var headers: HTTPFields = [.eTag: etag, .cacheControl: "no-cache"]
            if request.matchesETag(etag) { return Response(status: .notModified, headers: headers) }
            headers[.contentType] = "text/javascript; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: body))
        }
    }

    private struct Shell: Encodable {
        let version: String
        let assets, pages: [String]
        let clientScript, deviceScript: String
    }
}

/// What the browser's scripts get for one app's catalogs, made once with the router: the client table (routes
/// and ages) as `client.js` (content-addressed like every asset; pages load it first, the worker imports it)
/// and the service worker, whose shell precaches it.
struct ClientAssets: Sendable {
    /// `client.<fingerprint>.js`: `self.KioskClient`, the frozen `ClientTable` of these catalogs.
    let client: StaticAsset
    /// `/sw.js` for this shell.
    let serviceWorker: ServiceWorker.Script
    /// The features' scripts, by the name they are served under (never precached: the console is network-only).
    let extraAssets: [String: StaticAsset]

    init(catalogs: [any CatalogSource], features: [any WebFeature] = []) {
        extraAssets = Dictionary(features.flatMap(\.assets).map { ($0.servedName, $0) }, uniquingKeysWith: { first, _ in first })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Kiosk's own paths, catalog names and patterns of ASCII: JSON is a valid JavaScript expression for them.
        let json = (try? encoder.encode(ClientTable(catalogs: catalogs, networkOnly: features.flatMap(\.networkOnlyPrefixes)))).map { Array($0) } ?? Array("{}".utf8)
        client = StaticAsset(fileName: "client.js", contents: Array("self.KioskClient = Object.freeze(".utf8) + json + Array(");\n".utf8),
                             contentType: "text/javascript; charset=utf-8")
        serviceWorker = ServiceWorker.Script(client: client)
    }

    /// `GET /static/{file}`: the client table, or one of the static assets.
    func response(servedName: String, request: Request) throws -> Response {
        try StaticAssets.response(asset: servedName == client.servedName ? client : StaticAssets.byServedName[servedName] ?? extraAssets[servedName],
                                  servedName: servedName, request: request)
    }
}
