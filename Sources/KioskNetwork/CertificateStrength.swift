import KioskCore
import NIOCore
package import NIOSSL
import SwiftASN1

/// What makes an upstream's certificate too weak to trust though BoringSSL's chain check lets it pass: a SHA-1 or MD5
/// signature, an RSA key under 2048 bits, or a host named only in the subject's CN. Browsers refuse all three, and so does curl on OpenSSL's default security level
/// (2, Debian's): an app through Kiosk must not reach an upstream it could not reach directly, and the app, trusting
/// Kiosk's own leaf, cannot see the upstream's. NIOSSL hands over the leaf alone (the chain only to a verifier that
/// replaces BoringSSL's), so the leaf is what is read; the public PKI issues no SHA-1 intermediates any more.
package enum CertificateStrength {
    /// Why the certificate is too weak ("it is signed with SHA-1…"), nil when it is not, or when its DER cannot be read
    /// (BoringSSL read it: what this reader does not know is not taken for weakness).
    package static func weakness(of certificate: NIOSSLCertificate) -> String? {
        (try? certificate.toDERBytes()).flatMap(weakness(ofDER:))
    }

    /// `weakness(of:)` for a certificate's DER bytes.
    static func weakness(ofDER der: [UInt8]) -> String? {
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue } (RFC 5280 §4.1).
        guard let root = try? DER.parse(der), case .constructed(let parts) = root.content else { return nil }
        let certificate = Array(parts)
        guard certificate.count == 3, case .constructed(let tbsParts) = certificate[0].content else { return nil }
        // TBSCertificate: [0] version (absent for v1), serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo…
        var tbs = Array(tbsParts)
        if tbs.first?.identifier.tagClass == .contextSpecific { tbs.removeFirst() }
        guard tbs.count >= 6 else { return nil }
        // A self-signed certificate that passed is itself a trusted root (an --upstream-ca): its own signature is
        // not what makes it trusted, so its hash does not matter (RFC 5280 §6.1; browsers do the same).
        let selfSigned = tbs[2] == tbs[4]
        if !selfSigned, let algorithm = firstIdentifier(in: certificate[1]), let hash = weakSignatures[algorithm] {
            return "it is signed with \(hash), which browsers and curl refuse"
        }
        if let weak = keyWeakness(of: tbs[5]) { return weak }
        // BoringSSL falls back to the subject's CN for a name; browsers, Python and Go do not (RFC 6125 §6.4.4), and an
        // app trusting Kiosk's leaf, which names the host in a subjectAltName, would reach a server it could not directly.
        if !hasSubjectAltName(Array(tbs.dropFirst(6))) {
            return "it names its host only in its subject's common name, without a subjectAltName, which browsers refuse"
        }
        return nil
    }

    /// Why a trusted root's key is too weak (an --upstream-ca: the chain's root is not the leaf NIOSSL hands over), nil
    /// when it is not or its DER cannot be read.
    package static func keyWeakness(ofDER der: [UInt8]) -> String? {
        guard let root = try? DER.parse(der), case .constructed(let parts) = root.content,
              let first = parts.first(where: { _ in true }), case .constructed(let tbsParts) = first.content else { return nil }
        var tbs = Array(tbsParts)
        if tbs.first?.identifier.tagClass == .contextSpecific { tbs.removeFirst() }
        return tbs.count >= 6 ? keyWeakness(of: tbs[5]) : nil
    }

    private static func keyWeakness(of publicKeyInfo: ASN1Node) -> String? {
        guard let bits = rsaModulusBits(of: publicKeyInfo), bits < 2048 else { return nil }
        return "its RSA key has \(bits) bits, where browsers and curl want 2048 at least"
    }

    /// subjectAltName (RFC 5280 §4.2.1.6).
    private static let subjectAltName: ASN1ObjectIdentifier = [2, 5, 29, 17]

    /// Whether the TBSCertificate's parts after its SubjectPublicKeyInfo hold extensions ([3] EXPLICIT) with a subjectAltName.
    private static func hasSubjectAltName(_ tail: [ASN1Node]) -> Bool {
        guard let wrapped = tail.first(where: { $0.identifier.tagClass == .contextSpecific && $0.identifier.tagNumber == 3 }),
              case .constructed(let inner) = wrapped.content, let list = inner.first(where: { _ in true }),
              case .constructed(let extensions) = list.content else { return false }
        return extensions.contains { firstIdentifier(in: $0) == subjectAltName }
    }

    /// The signature algorithms (RFC 3279, RFC 5758) whose hash collisions can be made: MD2, MD5 and SHA-1 (SHAttered).
    private static let weakSignatures: [ASN1ObjectIdentifier: String] = [
        [1, 2, 840, 113549, 1, 1, 2]: "MD2", [1, 2, 840, 113549, 1, 1, 4]: "MD5",
        [1, 2, 840, 113549, 1, 1, 5]: "SHA-1", [1, 3, 14, 3, 2, 29]: "SHA-1",
        [1, 2, 840, 10045, 4, 1]: "SHA-1", [1, 2, 840, 10040, 4, 3]: "SHA-1",
    ]

    /// rsaEncryption (RFC 8017 Appendix C).
    private static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]

    /// The object identifier an AlgorithmIdentifier SEQUENCE starts with.
    private static func firstIdentifier(in node: ASN1Node) -> ASN1ObjectIdentifier? {
        guard case .constructed(let parts) = node.content, let first = parts.first(where: { _ in true }) else { return nil }
        return try? ASN1ObjectIdentifier(derEncoded: first)
    }

    /// The size of an RSA key's modulus, from its SubjectPublicKeyInfo; nil for any other key.
    private static func rsaModulusBits(of node: ASN1Node) -> Int? {
        guard case .constructed(let parts) = node.content else { return nil }
        let info = Array(parts)
        // A BIT STRING's first byte counts its unused bits: 0 for a key. Inside, RSAPublicKey ::= SEQUENCE { modulus, exponent }.
        guard info.count == 2, firstIdentifier(in: info[0]) == rsaEncryption, case .primitive(let bits) = info[1].content,
              bits.first == 0, let key = try? DER.parse(bits.dropFirst()), case .constructed(let numbers) = key.content,
              let modulus = numbers.first(where: { _ in true }), case .primitive(let digits) = modulus.content else { return nil }
        let significant = digits.drop { $0 == 0 }
        guard let top = significant.first else { return 0 }
        return (significant.count - 1) * 8 + (8 - top.leadingZeroBitCount)
    }
}

/// An upstream's certificate that passed BoringSSL's check and is still too weak to trust (`CertificateStrength`).
package struct WeakCertificate: Error, Equatable {
    /// Why, as `CertificateStrength.weakness(of:)` says it.
    package let reason: String
}

extension ChannelPipeline.SynchronousOperations {
    /// Throws `WeakCertificate` when the peer's certificate, its TLS handshake done on this pipeline, is too weak.
    /// Throws `UnnamedHost` when `host` is a name the certificate names only by the address dialled.
    package func refuseWeakPeerCertificate(naming host: String) throws {
        guard let leaf = try nioSSL_peerCertificate() else { return }
        if let reason = CertificateStrength.weakness(of: leaf) { throw WeakCertificate(reason: reason) }
        // NIOSSL's check takes a subjectAltName holding the address dialled for any name asked (a name pointed at an
        // address whose certificate someone holds would pass: DNS spoofed, an IP certificate bought), where browsers,
        // curl and Python want the name itself (RFC 6125 §6.4.4: an IP identifier for an IP reference only). The app,
        // trusting Kiosk's leaf, cannot tell. A name is matched against the DNS names alone.
        // (Read by NIOSSL's own parser, the one its check used: no certificate it read passes here unread.)
        guard IPAddress(literal: host) == nil else { return }
        let dnsNames = leaf._subjectAlternativeNames().filter { $0.nameType == .dnsName }.map { String(decoding: $0.contents, as: UTF8.self) }
        guard dnsNames.contains(where: { CertificateStrength.name($0, covers: host) }) else { throw UnnamedHost(host: host) }
    }
}

extension CertificateStrength {
    /// Whether a certificate's DNS name `pattern` covers `host`, as browsers match them (RFC 6125 §6.4): the same name
    /// in any case, a final dot aside, or `*.` and a name of at least two labels covering one label more, never less.
    static func name(_ pattern: String, covers host: String) -> Bool {
        func normal(_ name: String) -> String { (name.hasSuffix(".") ? String(name.dropLast()) : name).lowercased() }
        let pattern = normal(pattern), host = normal(host)
        guard pattern.hasPrefix("*.") else { return pattern == host }
        let base = pattern.dropFirst(2)
        guard base.contains("."), !base.contains("*"), let dot = host.firstIndex(of: ".") else { return false }
        return host[host.index(after: dot)...] == base && dot != host.startIndex
    }
}

/// An upstream's certificate that passed NIOSSL's name check for `host` by the address dialled, naming no such host.
package struct UnnamedHost: Error, Equatable {
    package let host: String
}
