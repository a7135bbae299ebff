package import Foundation
/// The steps that put a device or a tool behind `kiosk proxy` and make it trust Kiosk's CA, per platform, in English
/// and Spanish: one text for the proxy's own setup page (`http://kiosk.proxy/`) and the console's proxy page.
package struct ProxyGuide: Sendable {
    /// The languages the guide is written in.
    package enum Language: String, Sendable {
        case english = "en"
        case spanish = "es"
    }

    /// One platform's steps.
    package struct Section: Sendable {
        package let title: String
        package let steps: [HTML]
    }

    /// Where the page that shows the guide serves the CA: its PEM, its DER and (on the proxy's own page) the iOS profile.
    package struct Downloads: Sendable {
        package var pem: String
        package var der: String
        package var profile: String?

        package init(pem: String, der: String, profile: String? = nil) {
            self.pem = pem
            self.der = der
            self.profile = profile
        }
    }

    package let language: Language
    /// The proxy's address as a device sets it (`host:port`).
    package let proxy: String
    package let downloads: Downloads
    /// The address the proxy is bound to, when the one a device reached it at (`proxy`) says nothing of who else can (a
    /// browser on its machine reaches a proxy bound to every address at 127.0.0.1); nil: `proxy`'s host.
    package let boundHost: String?

    /// The proxy's data folder as its commands take it, when the page knows it (the console, beside the proxy).
    package enum DataFolder: Sendable {
        /// Not known here (the proxy's own page): the steps say to add the proxy's `--data-dir`.
        case unknown
        /// The default folder: no option needed.
        case standard
        /// `--data-dir` with this shell-quoted folder.
        case given(String)
    }
    package var dataFolder: DataFolder = .unknown

    package init(language: Language, proxy: String, downloads: Downloads, boundHost: String? = nil) {
        self.language = language
        self.proxy = proxy
        self.downloads = downloads
        self.boundHost = boundHost
    }

    private var spanish: Bool { language == .spanish }
    private func say(_ english: String, _ spanish: String) -> HTML { .text(self.spanish ? spanish : english) }
    private func code(_ text: String) -> HTML { .element("code", [], [.text(text)]) }
    private func link(_ path: String, _ english: String, _ spanish: String) -> HTML {
        .element("a", [.localHref(path)], [say(english, spanish)])
    }

    /// The sections, iPhone first.
    /// `kiosk proxy env` for this proxy: its port and host when they are not the defaults, so that the exports it
    /// prints point at the proxy that served this page.
    package var environmentCommand: String {
        var command = "kiosk proxy env"
        let separator = proxy.lastIndex(of: ":")
        let host = separator.map { String(proxy[..<$0]) } ?? proxy
        let port = separator.map { String(proxy[proxy.index(after: $0)...]) } ?? ""
        if !port.isEmpty, port != "8888" { command += " --port \(port)" }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if !bareHost.isEmpty, bareHost != "127.0.0.1" { command += " --host \(bareHost)" }
        if case .given(let folder) = dataFolder { command += " --data-dir \(folder)" }
        return command
    }

    /// The CA's file as a shell names it: the path `kiosk proxy ca --path` prints, for its data folder, where known.
    private var caFile: String {
        switch dataFolder {
        case .unknown: "kiosk-proxy-ca.pem"
        case .standard: "\"$(kiosk proxy ca --path)\""
        case .given(let folder): "\"$(kiosk proxy ca --path --data-dir \(folder))\""
        }
    }

    package var sections: [Section] {
        let proxyURL = "http://" + proxy
        let profile = downloads.profile.map { link($0, "the profile", "el perfil") }
            ?? .group([say("the profile from ", "el perfil de "), code("http://kiosk.proxy/")])
        return [
            Section(title: spanish ? "iPhone y iPad" : "iPhone and iPad", steps: [
                .group([say("Settings › Wi-Fi › the network’s (i) › Configure Proxy › Manual: server and port of ",
                            "Ajustes › Wi-Fi › (i) de la red › Configurar proxy › Manual: servidor y puerto de "), code(proxy), "."]),
                .group([say("Open ", "Abre "), profile,
                        say(" in Safari; then Settings › General › VPN & Device Management › Kiosk proxy › Install.",
                            " en Safari; luego Ajustes › General › VPN y gestión de dispositivos › Kiosk proxy › Instalar.")]),
                say("Settings › General › About › Certificate Trust Settings: turn on full trust for Kiosk proxy CA (iOS does not "
                    + "trust an installed root for HTTPS until then).",
                    "Ajustes › General › Información › Ajustes de confianza de certificados: activa la confianza total en Kiosk "
                    + "proxy CA (iOS no confía en una raíz instalada para HTTPS hasta entonces)."),
            ]),
            Section(title: "Android", steps: [
                .group([say("Settings › Wi-Fi › the network › Edit › Proxy › Manual: ",
                            "Ajustes › Wi-Fi › la red › Editar › Proxy › Manual: "), code(proxy), "."]),
                .group([say("Download ", "Descarga "), link(downloads.der, "the certificate", "el certificado"),
                        say(", then Settings › Security › Encryption & credentials › Install a certificate › CA certificate.",
                            " y luego Ajustes › Seguridad › Cifrado y credenciales › Instalar un certificado › Certificado de CA.")]),
                say("Apps trust user CAs only when their network_security_config allows it for debug builds "
                    + "(<debug-overrides><trust-anchors><certificates src=\"user\"/>); browsers other than Chrome may not.",
                    "Las apps confían en CA de usuario solo si su network_security_config lo permite en compilaciones de depuración "
                    + "(<debug-overrides><trust-anchors><certificates src=\"user\"/>); puede que los navegadores distintos de Chrome no."),
            ]),
            Section(title: "Firefox", steps: [
                .group([say("Settings › Network Settings › Manual proxy configuration: HTTP proxy ",
                            "Ajustes › Configuración de red › Configuración manual del proxy: proxy HTTP "), code(proxy),
                        say(", also for HTTPS.", ", también para HTTPS.")]),
                .group([say("For sites of this machine (localhost, 127.0.0.1), which Firefox sends past any proxy: about:config › ",
                            "Para los sitios de esta máquina (localhost, 127.0.0.1), que Firefox no pasa por ningún proxy: about:config › "),
                        code("network.proxy.allow_hijacking_localhost"), say(" = true.", " = true.")]),
                .group([say("Settings › Privacy & Security › Certificates › View Certificates › Authorities › Import ",
                            "Ajustes › Privacidad y seguridad › Certificados › Ver certificados › Autoridades › Importar "),
                        link(downloads.pem, "the certificate", "el certificado"),
                        say(", trusting it to identify websites.", ", confiando en él para identificar sitios web.")]),
            ]),
            Section(title: "Chrome / Chromium", steps: [
                .group([say("Start it with ", "Ábrelo con "), code("--proxy-server=\(proxyURL) --proxy-bypass-list='<-loopback>'"),
                        say(" (the second sends sites of this machine, localhost and 127.0.0.1, through the proxy too: Chrome skips it for "
                            + "them otherwise), or set the system's proxy.",
                            " (la segunda pasa también por el proxy los sitios de esta máquina, localhost y 127.0.0.1, que Chrome si no "
                            + "salta), o configura el proxy del sistema.")]),
                .group([say("Linux: ", "Linux: "), code("certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n kiosk -i \(caFile)"),
                        say("; macOS and Windows: add the certificate to the system's trusted roots.",
                            "; macOS y Windows: añade el certificado a las raíces de confianza del sistema.")]),
            ]),
            Section(title: spanish ? "curl y la terminal" : "curl and the shell", steps: [
                code("curl -x \(proxyURL) --cacert \(caFile) https://example.com/"),
                .group([say("On Kiosk's machine: ", "En la máquina de Kiosk: "), code("eval \"$(\(environmentCommand))\""),
                        {
                            if case .unknown = dataFolder {
                                return say(" sets HTTP_PROXY, HTTPS_PROXY and the CA for curl, OpenSSL, Python and Node (with kiosk proxy's "
                                           + "--data-dir, if it was given one).",
                                           " define HTTP_PROXY, HTTPS_PROXY y la CA para curl, OpenSSL, Python y Node (con el --data-dir de "
                                           + "kiosk proxy, si se le dio uno).")
                            }
                            return say(" sets HTTP_PROXY, HTTPS_PROXY and the CA for curl, OpenSSL, Python and Node.",
                                       " define HTTP_PROXY, HTTPS_PROXY y la CA para curl, OpenSSL, Python y Node.")
                        }()]),
            ]),
        ]
    }

    /// The sentence for apps that pin their certificates.
    package var pinning: HTML {
        say("Apps that pin their certificates refuse any other CA: run the proxy with --ignore HOST to pass them through unread.",
            "Las apps que fijan sus certificados rechazan cualquier otra CA: arranca el proxy con --ignore HOST para que pasen sin leerse.")
    }

    /// Where the proxy listens on loopback, what a phone needs instead (its steps name an address it cannot reach); nil
    /// for a proxy other machines reach.
    package var loopbackNote: HTML? {
        let host = boundHost ?? proxy.lastIndex(of: ":").map { String(proxy[..<$0]) } ?? proxy
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard IPAddress.isLoopback(host: bare) else { return nil }
        return .group([say("This proxy listens on this machine only (\(proxy)): a phone or another computer cannot reach it. To let one "
                           + "reach it, start it with ", "Este proxy solo escucha en esta máquina (\(proxy)): un teléfono u otro ordenador "
                           + "no llegan a él. Para que uno llegue, arráncalo con "),
                       code("kiosk proxy --host 0.0.0.0 --proxy-auth"),
                       say(" and give the device this machine's network address, the port and the password it prints.",
                           " y dale al dispositivo la dirección de red de esta máquina, el puerto y la contraseña que imprime.")])
    }

    /// Every section as `<section><h2>title</h2><ol>steps</ol></section>` (`<h3>` when `nested`), then the pinning note; a
    /// proxy on loopback's note first.
    package func rendered(nested: Bool = false) -> HTML {
        let note: [HTML] = loopbackNote.map { [.element("p", [.class("banner")], [$0])] } ?? []
        return .group(note + sections.map { section in
            let title: HTML = nested ? .element("h3", [], [.text(section.title)]) : .element("h2", [], [.text(section.title)])
            return .element("section", [], [title, .element("ol", [], section.steps.map { .element("li", [], [$0]) })])
        } + [.element("p", [], [pinning])])
    }
}

extension ProxyGuide {
    /// An iOS and macOS configuration profile holding the CA (`certificateDER`) as a root payload, its identifiers drawn
    /// from the CA's SHA-256 `fingerprint` (colon-separated hex), so that every download of one CA is the same profile
    /// (installing it again replaces, not adds), wherever it is served (the proxy's setup page, the console).
    package static func configurationProfile(certificateDER: Data, fingerprint: String) -> [UInt8] {
        var digest = fingerprint.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        digest += [UInt8](repeating: 0, count: max(0, 32 - digest.count))
        func uuid(_ offset: Int) -> String {
            var bytes = Array(digest[offset..<offset + 16])
            bytes[6] = (bytes[6] & 0x0F) | 0x50  // a name-based UUID's version and variant bits
            bytes[8] = (bytes[8] & 0x3F) | 0x80
            return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                               bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15])).uuidString
        }
        let root: [String: Any] = [
            "PayloadType": "com.apple.security.root", "PayloadVersion": 1, "PayloadUUID": uuid(0),
            "PayloadIdentifier": "kiosk.proxy.ca." + uuid(0), "PayloadDisplayName": "Kiosk proxy CA",
            "PayloadDescription": "Lets Kiosk's proxy read this device's HTTPS for debugging.",
            "PayloadCertificateFileName": "kiosk-proxy-ca.cer", "PayloadContent": certificateDER,
        ]
        let profile: [String: Any] = [
            "PayloadType": "Configuration", "PayloadVersion": 1, "PayloadUUID": uuid(16),
            "PayloadIdentifier": "kiosk.proxy." + uuid(16), "PayloadDisplayName": "Kiosk proxy",
            "PayloadDescription": "The certificate authority of a Kiosk proxy. Remove this profile when you stop debugging.",
            "PayloadRemovalDisallowed": false, "PayloadContent": [root],
        ]
        // Foundation writes the XML property list; a failure would be a bug in the values above.
        return Array((try? PropertyListSerialization.data(fromPropertyList: profile, format: .xml, options: 0)) ?? Data())
    }
}
