import Crypto
import Foundation
import KioskCore
import NIOHTTP1

/// The setup page at `http://kiosk.proxy/`: a name that never leaves Kiosk (the proxy answers it itself, never
/// resolving it), so a phone or a browser whose proxy is Kiosk can fetch the CA before it trusts it, as mitmproxy's
/// mitm.it does. It serves the CA certificate (PEM, DER, an iOS configuration profile) and the steps to trust it on
/// each platform. The CA's key is never among them.
enum ProxySetup {
    /// The host the setup page answers under.
    static let host = "kiosk.proxy"

    /// An answer of the setup page.
    struct Answer {
        let status: HTTPResponseStatus
        let contentType: String
        let body: [UInt8]
        /// Extra fields (a download's file name).
        var fields: [(String, String)] = []
    }

    /// Whether `url` is addressed to the setup page's host (every request is asked: the answer's words are made only
    /// for those that are).
    static func isAddressed(_ url: URL) -> Bool {
        // `kiosk.proxy.` (the absolute form of the name) too: it must never go to a resolver either.
        guard var name = url.host(percentEncoded: false)?.lowercased() else { return false }
        if name.hasSuffix(".") { name.removeLast() }
        return name == host
    }

    /// The answer for `path` (its query ignored), with `proxy` the address the app used to reach the proxy, or nil
    /// for a request that is not the setup page's.
    static func answer(_ url: URL, method: HTTPMethod, authority: ProxyAuthority?, proxy: String, boundHost: String? = nil,
                       language: ProxyGuide.Language = .english) -> Answer? {
        guard isAddressed(url) else { return nil }
        guard method == .GET || method == .HEAD else {
            return Answer(status: .methodNotAllowed, contentType: "text/plain; charset=utf-8", body: Array("Only GET.\n".utf8),
                          fields: [("Allow", "GET, HEAD")])
        }
        switch (url.path, authority) {
        case ("/", _), ("", _):
            return Answer(status: .ok, contentType: "text/html; charset=utf-8", body: Array(page(authority: authority, proxy: proxy, boundHost: boundHost, language: language).utf8),
                          fields: [("Content-Language", language.rawValue), ("Vary", "Accept-Language")])
        case ("/ca.pem", let authority?):
            return download(Array(authority.certificatePEM.utf8), type: "application/x-pem-file", name: "kiosk-proxy-ca.pem")
        case ("/ca.der", let authority?), ("/ca.crt", let authority?):
            return download(Array(authority.certificateDER), type: "application/x-x509-ca-cert", name: "kiosk-proxy-ca.crt")
        case ("/ca.mobileconfig", let authority?):
            return download(ProxyGuide.configurationProfile(certificateDER: authority.certificateDER, fingerprint: authority.fingerprint),
                            type: "application/x-apple-aspen-config", name: "kiosk-proxy.mobileconfig")
        default:
            let text = language == .spanish ? "Aquí no hay nada: http://\(host)/ tiene la página de configuración.\n"
                : "Nothing here: http://\(host)/ has the setup page.\n"
            return Answer(status: .notFound, contentType: "text/plain; charset=utf-8", body: Array(text.utf8),
                          fields: [("Content-Language", language.rawValue), ("Vary", "Accept-Language")])
        }
    }

    /// Spanish when the device's first language is, else English.
    static func language(_ acceptLanguage: String?) -> ProxyGuide.Language {
        let first = acceptLanguage?.split(separator: ",").first?.split(separator: ";").first?
            .trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return first == "es" || first.hasPrefix("es-") ? .spanish : .english
    }

    private static func download(_ body: [UInt8], type: String, name: String) -> Answer {
        Answer(status: .ok, contentType: type, body: body, fields: [("Content-Disposition", "attachment; filename=\"\(name)\"")])
    }

    private static func code(_ text: String) -> HTML { .element("code", [], [.text(text)]) }

    /// The page: what this is, the downloads, and the steps per platform (ProxyGuide, in `language`).
    static func page(authority: ProxyAuthority?, proxy: String, boundHost: String? = nil, language: ProxyGuide.Language = .english) -> String {
        let spanish = language == .spanish
        var body: [HTML] = [
            .element("h1", [], [.text(spanish ? "Confiar en el proxy de Kiosk" : "Trust Kiosk's proxy")]),
            .element("p", [], [.text(spanish
                ? "El tráfico de este dispositivo llega al proxy de Kiosk en \(proxy). Para que Kiosk lea su HTTPS, el dispositivo "
                    + "debe confiar en la autoridad de certificación de Kiosk, hecha solo para este Kiosk; su clave nunca sale de la "
                    + "máquina donde corre Kiosk. Quítala cuando termines de depurar."
                : "This device's traffic reaches Kiosk's proxy at \(proxy). To let Kiosk read its HTTPS, "
                    + "the device must trust Kiosk's certificate authority — made for this Kiosk alone; its key "
                    + "never leaves the machine Kiosk runs on. Remove it when you stop debugging.")]),
        ]
        if let authority {
            body.append(.element("p", [.class("downloads")], [
                .element("a", [.localHref("/ca.pem")], [.text(spanish ? "Certificado (PEM)" : "Certificate (PEM)")]), " · ",
                .element("a", [.localHref("/ca.crt")], [.text(spanish ? "Certificado (DER, Android y Windows)"
                                                                       : "Certificate (DER, Android and Windows)")]), " · ",
                .element("a", [.localHref("/ca.mobileconfig")], [.text(spanish ? "Perfil para iPhone, iPad y Mac"
                                                                                : "Profile for iPhone, iPad and Mac")]),
            ]))
            body.append(.element("p", [], [.text(spanish ? "Huella SHA-256: " : "SHA-256 fingerprint: "), code(authority.fingerprint)]))
            let guide = ProxyGuide(language: language, proxy: proxy,
                                   downloads: .init(pem: "/ca.pem", der: "/ca.crt", profile: "/ca.mobileconfig"), boundHost: boundHost)
            body.append(guide.rendered())
        } else {
            body.append(.element("p", [], [.text(spanish
                ? "Este proxy no lee HTTPS: sus túneles CONNECT pasan sin leerse, así que no hay certificado en que confiar."
                : "This proxy does not read HTTPS: its CONNECT tunnels pass through unread, so there is no certificate to trust.")]))
        }
        let style = "body{font:16px/1.5 system-ui,sans-serif;max-width:44rem;margin:1rem auto;padding:0 1rem;color:#111;background:#fff}"
            + "code{background:#eee;padding:0 .2rem;overflow-wrap:anywhere}a{color:#0645ad}"
            + "@media (prefers-color-scheme:dark){body{color:#eee;background:#111}code{background:#333}a{color:#8ab4f8}}"
        let document = HTML.element("html", [.attribute("lang", language.rawValue)], [
            .element("head", [], [
                .void("meta", [.attribute("charset", "utf-8")]),
                .void("meta", [.attribute("name", "viewport"), .attribute("content", "width=device-width, initial-scale=1")]),
                .element("title", [], [.text(spanish ? "Configurar el proxy de Kiosk" : "Kiosk proxy setup")]),
                .element("style", [], [.text(style)]),
            ]),
            .element("body", [], [.element("main", [], body)]),
        ])
        return "<!doctype html>\n" + document.rendered
    }
}
