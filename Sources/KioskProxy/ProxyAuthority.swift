import Crypto
public import Foundation
import KioskCore
import NIOCore
package import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// Kiosk's own certificate authority for reading inside HTTPS: made on first use, one per data directory (P-256,
/// its key readable by its owner only, never printed, logged or served), and the leaf certificates it mints for
/// each host an app connects to — as today's clients demand of them (SAN, serverAuth, digitalSignature, CA:false,
/// the authority's key id, at most 45 days), minted here without asking the upstream, so interception works
/// offline — kept per host and renewed a day before they expire.
public final class ProxyAuthority: Sendable {
    /// The CA certificate's file in the data directory (what a user installs and trusts).
    public static let certificateFileName = "kiosk-proxy-ca.pem"
    /// Its key's file (mode 0600).
    public static let keyFileName = "kiosk-proxy-ca-key.pem"
    /// How long a leaf lasts: under the shortest limit clients apply, even to user-installed roots. A second less than
    /// 45 days, since RFC 5280 §4.1.2.5 counts both ends of the validity period in (a second more than it says apart).
    static let leafLifetime: TimeInterval = 45 * 86_400 - 1
    /// How long the CA lasts.
    static let authorityLifetime: TimeInterval = 10 * 365 * 86_400
    /// How many hosts' TLS contexts are kept.
    static let cacheLimit = 1000

    /// The CA certificate, PEM.
    public let certificatePEM: String
    /// The CA certificate, DER.
    public let certificateDER: Data
    /// The SHA-256 fingerprint of the CA certificate, "AB:CD:…".
    public let fingerprint: String
    /// When the CA certificate expires: no leaf it signs outlives it.
    public var expires: Date { certificate.notValidAfter }

    private let certificate: Certificate
    private let key: Certificate.PrivateKey
    /// One key for every leaf: minting then costs one signature, not a key generation.
    private let leafKey: P256.Signing.PrivateKey
    private let leafKeyForTLS: NIOSSLPrivateKey
    /// The CA certificate sent after each leaf, as mitmproxy does: a client that pins the CA's key (Chromium's
    /// `--ignore-certificate-errors-spki-list`) finds it in the chain, and one that trusts it ignores the copy.
    private let certificateForTLS: NIOSSLCertificate
    private let now: @Sendable () -> Date
    private let contexts = Mutex<[String: (context: NIOSSLContext, renewAt: Date, used: UInt64)]>([:])
    private let uses = Atomic<UInt64>(0)

    private init(certificate: Certificate, key: Certificate.PrivateKey, now: @escaping @Sendable () -> Date) throws {
        self.certificate = certificate
        self.key = key
        self.now = now
        certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        certificateDER = Data(serializer.serializedBytes)
        fingerprint = SHA256.hash(data: certificateDER).map { String(format: "%02X", $0) }.joined(separator: ":")
        certificateForTLS = try NIOSSLCertificate(bytes: Array(certificateDER), format: .der)
        leafKey = P256.Signing.PrivateKey()
        leafKeyForTLS = try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)
    }

    /// The authority of `directory`: read from its files, or made and written there when it has none — one CA per directory
    /// however many processes start on it at once. Throws, saying what to do, when the key can be read by others, the files
    /// cannot be read or written, or the certificate is not a CA.
    public static func inDirectory(_ directory: URL, now: @escaping @Sendable () -> Date = { Date() }) throws -> ProxyAuthority {
        // The certificate is renamed into place after its key, both written whole: once it is there, so is the key,
        // and it is read without the lock (a data directory it cannot write to still serves the CA it holds).
        if let existing = try stored(in: directory, now: now) { return existing }
        do {
            try SecretFile.makeFolder(directory)
        } catch let error as KioskError {
            // The folder refused (others may write to it): said in its own words.
            throw error
        } catch {
            throw KioskError.storage("cannot create the folder \(directory.path) for the proxy's CA: "
                                     + KioskError.fileReason(error, path: directory.path))
        }
        // Processes starting at once on a fresh directory (ten `kiosk proxy ca`, two `kiosk proxy`) would each make a CA,
        // print theirs, and leave a key of one beside the certificate of another. Under the lock, the first makes it and
        // the others read it.
        let lock = directory.appendingPathComponent(lockFileName).path
        return try SecretFile.withLock(lock, failure: { reason -> any Error in
            KioskError.storage("cannot lock \(lock) to make the proxy's CA: \(reason)")
        }) { () throws -> ProxyAuthority in
            if let existing = try stored(in: directory, now: now) { return existing }
            // No certificate: no CA was ever handed out. A key found here is what a process that stopped between its two
            // writes left (or an empty file): nobody can trust a CA whose certificate was never written, so it is replaced.
            return try make(in: directory, now: now)
        }
    }

    /// The lock file every process takes to make the CA of a data directory.
    static let lockFileName = "kiosk-proxy-ca.lock"

    /// The authority stored in `directory`, nil when it has no certificate file.
    private static func stored(in directory: URL, now: @escaping @Sendable () -> Date) throws -> ProxyAuthority? {
        let certificateURL = directory.appendingPathComponent(certificateFileName)
        let keyURL = directory.appendingPathComponent(keyFileName)
        guard FileManager.default.fileExists(atPath: certificateURL.path) else { return nil }
        if let mode = SecretFile.othersCanRead(keyURL.path) {
            throw KioskError.invalidRequest("The proxy's CA key \(keyURL.path) can be read by others (mode \(String(mode, radix: 8))): "
                                            + "anyone who copies it can read this machine's HTTPS through the proxy. chmod 600 it, "
                                            + "or delete both \(certificateFileName) and \(keyFileName) to make a new CA (and trust it again).")
        }
        // A file that cannot be read (the key deleted, a folder in its place) is said in a person's words, not Foundation's.
        func text(of url: URL) throws -> String {
            do {
                return try String(contentsOf: url, encoding: .utf8)
            } catch {
                throw KioskError.invalidRequest("\(url.lastPathComponent) cannot be read (\(KioskError.fileReason(error, path: url.path)))")
            }
        }
        do {
            let certificate = try Certificate(pemEncoded: text(of: certificateURL))
            let key = try Certificate.PrivateKey(pemEncoded: text(of: keyURL))
            guard key.publicKey == certificate.publicKey,
                  (try? certificate.extensions.basicConstraints) == .isCertificateAuthority(maxPathLength: 0) else {
                throw KioskError.invalidRequest("they are not a CA certificate and its key")
            }
            // Every client refuses what an expired CA signs: starting with it would fail each HTTPS app without a word.
            guard certificate.notValidAfter > now() else {
                throw KioskError.invalidRequest("the CA certificate expired on "
                                                + certificate.notValidAfter.formatted(Date.ISO8601FormatStyle().year().month().day()))
            }
            return try ProxyAuthority(certificate: certificate, key: key, now: now)
        } catch {
            throw KioskError.invalidRequest("The proxy's CA (\(certificateURL.path), \(keyURL.path)) cannot be used: "
                                            + "\((error as? KioskError)?.description ?? String(describing: error)). "
                                            + "Delete both to make a new one (and trust it again).")
        }
    }

    /// A new CA, written to `directory`: its key first, then its certificate, each renamed into place whole, so that the
    /// certificate's presence means the pair is complete.
    private static func make(in directory: URL, now: @escaping @Sendable () -> Date) throws -> ProxyAuthority {
        let signingKey = P256.Signing.PrivateKey()
        let key = Certificate.PrivateKey(signingKey)
        let made = now()
        let name = try DistinguishedName {
            CommonName("Kiosk proxy CA (\(ProcessInfo.processInfo.hostName))")
            OrganizationName("Kiosk")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: Self.serialNumber(), publicKey: key.publicKey,
            notValidBefore: made.addingTimeInterval(-86_400), notValidAfter: made.addingTimeInterval(authorityLifetime),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: key.publicKey)
            },
            issuerPrivateKey: key)
        for (what, text, url) in [("key", signingKey.pemRepresentation + "\n", directory.appendingPathComponent(keyFileName)),
                                  ("certificate", try certificate.serializeAsPEM().pemString + "\n",
                                   directory.appendingPathComponent(certificateFileName))] {
            do {
                try SecretFile.write(text, to: url)
            } catch {
                throw KioskError.storage("cannot write the proxy's CA \(what) \(url.path): \(KioskError.fileReason(error, path: url.path))")
            }
        }
        return try ProxyAuthority(certificate: certificate, key: key, now: now)
    }

    /// A TLS server context presenting a leaf for `host` (a name or an IP address), ALPN http/1.1 only: from the
    /// cache, or minted. Costs a signature and a context the first time for a host; run it off the event loops.
    package func serverContext(for host: String) throws -> NIOSSLContext {
        let name = host.lowercased()
        let tick = uses.wrappingAdd(1, ordering: .relaxed).newValue
        let date = now()
        if let context = contexts.withLock({ cache -> NIOSSLContext? in
            guard let entry = cache[name], entry.renewAt > date else { return nil }
            cache[name]?.used = tick
            return entry.context
        }) { return context }
        let leaf = try mint(for: name, at: date)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(leaf), .certificate(certificateForTLS)], privateKey: .privateKey(leafKeyForTLS))
        configuration.applicationProtocols = ["http/1.1"]
        configuration.minimumTLSVersion = .tlsv12
        // An intercepted tunnel may cross a Wi-Fi (a phone's app): the suites of Kiosk's own HTTPS, none with CBC or SHA-1.
        configuration.cipherSuites = ListenerPolicy.tls12CipherSuites
        // Closing its side, the proxy waits this long for the app's close_notify, not NIO's 5 s: a stop, whose grace has
        // already waited for the app, took twice as long with an intercepted WebSocket open, and its record was lost.
        configuration.shutdownTimeout = .seconds(1)
        let context = try NIOSSLContext(configuration: configuration)
        contexts.withLock { cache in
            if cache.count >= Self.cacheLimit, let oldest = cache.min(by: { $0.value.used < $1.value.used })?.key {
                cache.removeValue(forKey: oldest)
            }
            // Renewed a day before it expires (it was made valid from a day ago: 45 days in all), or as the CA's end cuts it;
            // past that end (a proxy left running), kept an hour: a new one would be refused all the same.
            let renewAt = min(date.addingTimeInterval(Self.leafLifetime - 2 * 86_400), certificate.notValidAfter)
            cache[name] = (context, max(renewAt, date.addingTimeInterval(3600)), tick)
        }
        return context
    }

    /// A leaf certificate for `host`, signed by the CA.
    func mint(for host: String, at date: Date) throws -> NIOSSLCertificate {
        let subjectName: GeneralName
        if let address = IPAddress(literal: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) {
            subjectName = .ipAddress(ASN1OctetString(contentBytes: ArraySlice(address.bytes)))
        } else {
            subjectName = .dnsName(host)
        }
        let leafPublicKey = Certificate.PublicKey(leafKey.publicKey)
        let end = min(date.addingTimeInterval(Self.leafLifetime - 86_400), certificate.notValidAfter)
        let leaf = try Certificate(
            version: .v3, serialNumber: Self.serialNumber(), publicKey: leafPublicKey,
            // Never past the CA's own end: a client would refuse the chain then anyway, and the leaf would say otherwise (nor
            // beginning after it ends, past the CA's end).
            notValidBefore: min(date.addingTimeInterval(-86_400), end.addingTimeInterval(-1)),
            notValidAfter: end,
            issuer: certificate.subject, subject: try DistinguishedName { CommonName(String(host.prefix(64))) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([subjectName])
                AuthorityKeyIdentifier(keyIdentifier: try certificate.extensions.subjectKeyIdentifier?.keyIdentifier
                                       ?? SubjectKeyIdentifier(hash: certificate.publicKey).keyIdentifier)
            },
            issuerPrivateKey: key)
        var serializer = DER.Serializer()
        try serializer.serialize(leaf)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }
}

extension ProxyAuthority {
    /// A random serial number of exactly 20 octets, positive and without a leading zero: RFC 5280 §4.1.2.2 allows no
    /// more, and swift-certificates' own random one takes 21 when its first bit is set (a 0 byte keeps it positive).
    static func serialNumber() -> Certificate.SerialNumber {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<20).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] = bytes[0] & 0x7F | 0x01
        return Certificate.SerialNumber(bytes: bytes)
    }
}
