import Foundation
import Hummingbird
import KioskCore

/// A 64-bit FNV-1a hash as 16 hex digits: content fingerprints for cache busting and ETags. Not a security
/// measure: it only has to change when the content does.
enum Fingerprint {
    static func hex(_ bytes: some Sequence<UInt8>) -> String { Hex.encode(FNV1a.hash(bytes)) }
}

/// One file of `Resources/` served under `/static/`, at an address that carries its content's fingerprint
/// (`/static/app.3f2a9c1b5d6e7f80.css`): the address changes whenever the content does, so browsers may keep
/// it forever. Everything a response needs is computed once, when the file is loaded.
package struct StaticAsset: Sendable {
    /// The file's name in `Resources/` ("app.css").
    let fileName: String
    /// The name it is served under, with the fingerprint before the extension ("app.3f2a9c1b5d6e7f80.css").
    let servedName: String
    /// The content as it is sent.
    let body: ByteBuffer
    /// A strong validator: the fingerprint, quoted.
    let etag: String
    /// Content-Type, ETag and the year-long immutable Cache-Control.
    let headers: HTTPFields
    /// What a 304 repeats: the validator and the caching rule, without a body.
    let notModifiedHeaders: HTTPFields

    /// The address pages link.
    var path: String { Route.staticFile(servedName).path }

    /// An asset of `contents`, fingerprinted.
    package init(fileName: String, contents: [UInt8], contentType: String) {
        let fingerprint = Fingerprint.hex(contents)
        let dot = fileName.lastIndex(of: ".") ?? fileName.endIndex
        self.fileName = fileName
        servedName = String(fileName[..<dot]) + "." + fingerprint + String(fileName[dot...])
        body = ByteBuffer(bytes: contents)
        etag = "\"" + fingerprint + "\""
        notModifiedHeaders = [.eTag: etag, .cacheControl: "public, max-age=31536000, immutable"]
        var headers = notModifiedHeaders
        headers[.contentType] = contentType
        self.headers = headers
    }
}

/// The stylesheet, the scripts and the icons, read once from the resource bundle (`kiosk_KioskWeb.resources`, found
/// beside the binary whatever the working directory) and served from memory.
enum StaticAssets {
    /// `app.css`, every page's stylesheet.
    static let stylesheet = load("app.css", contentType: "text/css; charset=utf-8")
    /// `app.js`, what every page's enhancement needs.
    static let script = load("app.js", contentType: "text/javascript; charset=utf-8")
    /// `device.js`, what this device keeps (saved pages and pictures, the outbox of edits, settings), shared by
    /// the pages and the service worker.
    static let deviceScript = load("device.js", contentType: "text/javascript; charset=utf-8")
    /// `offline.js`: the page's side of offline reading (registration, banners, the storage panel, pending edits).
    static let offlineScript = load("offline.js", contentType: "text/javascript; charset=utf-8")

    /// The app icons (drawn by scripts/dev/make-icons.py): any-purpose 192 and 512 px, maskable ones with the
    /// mark inside the safe zone, and the 180 px Apple touch icon.
    static let icon192 = load("icon-192.png", contentType: "image/png")
    static let icon512 = load("icon-512.png", contentType: "image/png")
    static let maskableIcon192 = load("icon-maskable-192.png", contentType: "image/png")
    static let maskableIcon512 = load("icon-maskable-512.png", contentType: "image/png")
    static let appleTouchIcon = load("apple-touch-icon.png", contentType: "image/png")

    /// Every asset by the name it is served under.
    static let byServedName: [String: StaticAsset] = Dictionary(
        uniqueKeysWithValues: [stylesheet, script, deviceScript, offlineScript, icon192, icon512, maskableIcon192, maskableIcon512, appleTouchIcon]
            .map { ($0.servedName, $0) })

    /// Reads every asset, so a broken installation stops the process at start-up rather than on a request.
    static func preload() {
        _ = byServedName
        _ = resource("sw.js")
    }

    /// `GET /static/{file}`: `asset` (the one served under that fingerprinted name), or 304 when the browser has
    /// it. Any other name — an unknown file, or a known one with an old fingerprint (a page from before an
    /// upgrade) — is a 404 rather than a redirect: an immutable address must never answer with other content.
    static func response(asset: StaticAsset?, servedName: String, request: Request) throws -> Response {
        guard let asset else {
            let name = String(servedName.prefix(80))
            throw WebError.notFound(said: { $0.noSuchFile(name) })
        }
        if request.matchesETag(asset.etag) { return Response(status: .notModified, headers: asset.notModifiedHeaders) }
        return Response(status: .ok, headers: asset.headers, body: ResponseBody(byteBuffer: asset.body))
    }

    private static func load(_ fileName: String, contentType: String) -> StaticAsset {
        StaticAsset(fileName: fileName, contents: resource(fileName), contentType: contentType)
    }

    /// The bytes of `fileName` in the resource bundle; a missing file stops the process (see `preload`).
    static func resource(_ fileName: String) -> [UInt8] {
        let dot = fileName.lastIndex(of: ".")!
        guard let url = Bundle.module.url(forResource: String(fileName[..<dot]), withExtension: String(fileName[fileName.index(after: dot)...])),
              let data = try? Data(contentsOf: url) else {
            fatalError("Kiosk's resource bundle (kiosk_KioskWeb.resources, beside the kiosk binary) has no \(fileName): reinstall Kiosk.")
        }
        return Array(data)
    }
}

extension Request {
    /// Whether the browser already has the representation with `etag` (If-None-Match, weak comparison as
    /// RFC 9110 asks for it).
    func matchesETag(_ etag: String) -> Bool {
        guard let header = headers[.ifNoneMatch] else { return false }
        return header.split(separator: ",").contains { candidate in
            let tag = candidate.trimmingCharacters(in: .whitespaces)
            return tag == "*" || tag == etag || tag == "W/" + etag
        }
    }
}
