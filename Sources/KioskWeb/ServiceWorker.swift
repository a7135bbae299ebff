import Foundation
import Hummingbird

/// `/sw.js`: the service worker that keeps Kiosk readable when the Kiosk server itself is unreachable. It is
/// `Resources/sw.js` behind a one-line prelude naming this build's app shell — the content-addressed assets
/// to precache, the pages of the shell, and a version computed from all of it. Any change to the shell changes
/// the script's bytes, which is how a browser learns there is a new version (and offers "New version — Reload").
/// Served at the root, so its scope is the whole site; never cached by HTTP, so an update is seen at once.
enum ServiceWorker {
    /// Where pages register it.
    static let path = "/sw.js"

    /// The script as served, built once.
    static let script = Script()

    /// The served bytes and their validator.
    struct Script: Sendable {
        /// The shell's version: the fingerprint of the worker's source and of every precached address.
        let version: String
        /// The content-addressed files of the shell (stylesheet, scripts, icons).
        let assets: [String]
        /// The shell's pages, fetched anew for each version: the home page (what an installed app opens on),
        /// the offline page and the manifest.
        let pages: [String]
        let body: ByteBuffer
        let etag: String

        init() {
            let source = StaticAssets.resource("sw.js")
            assets = [StaticAssets.stylesheet, StaticAssets.script, StaticAssets.deviceScript, StaticAssets.offlineScript,
                      StaticAssets.icon192, StaticAssets.icon512, StaticAssets.maskableIcon192, StaticAssets.maskableIcon512,
                      StaticAssets.appleTouchIcon].map(\.path)
            pages = ["/", "/offline", WebManifest.path]
            version = Fingerprint.hex(source + Array((assets + pages).joined(separator: "\n").utf8))
            let shell = Shell(version: version, assets: assets, pages: pages, deviceScript: StaticAssets.deviceScript.path)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            // The values are Kiosk's own paths and hex digits: JSON is a valid JavaScript expression for them.
            let json = (try? encoder.encode(shell)).map { Array($0) } ?? Array("{}".utf8)
            let bytes = Array("self.kioskShell = ".utf8) + json + Array(";\n".utf8) + source
            body = ByteBuffer(bytes: bytes)
            etag = "\"" + Fingerprint.hex(bytes) + "\""
        }
    }

    private struct Shell: Encodable {
        let version: String
        let assets, pages: [String]
        let deviceScript: String
    }

    /// `GET /sw.js`: the script, or 304 when the browser has this version. `no-cache` rather than a lifetime:
    /// browsers cap a worker's HTTP freshness at a day anyway, and a new version must be found on the next visit.
    static func response(request: Request) -> Response {
        var headers: HTTPFields = [.eTag: script.etag, .cacheControl: "no-cache"]
        if request.matchesETag(script.etag) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = "text/javascript; charset=utf-8"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: script.body))
    }
}
