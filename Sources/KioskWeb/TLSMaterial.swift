import Crypto
public import Foundation
public import KioskCore
import NIOCore
import NIOSSL
import SwiftASN1
import X509
#if canImport(Glibc)
import Glibc
#endif

/// What an HTTPS listener presents: a certificate chain (leaf first) and its private key, both PEM, with
/// what a person checks the leaf by. Either the user's own files (`--tls-cert`/`--tls-key`) or the
/// self-signed certificate `serve --lan` keeps in the data directory (`selfSigned(in:names:addresses:now:)`).
public struct TLSMaterial: Sendable {
    /// The chain's DER certificates, leaf first.
    let chain: [[UInt8]]
    /// The private key, PEM (PKCS#8, SEC1 or PKCS#1).
    let privateKeyPEM: String
    /// The leaf's SHA-256 as colon-separated uppercase hex pairs, as browsers show it ("3A:0F:…").
    public let fingerprint: String
    /// The base64 SHA-256 of the leaf's SubjectPublicKeyInfo: what Chromium's
    /// `--ignore-certificate-errors-spki-list` and HTTP public key pins name.
    public let publicKeyPin: String
    /// When the leaf expires.
    public let notValidAfter: Date
    /// The leaf's subject alternative names (DNS names and IP addresses), as text.
    public let names: [String]

    /// The chain in `certificatePEM` (leaf first) and the key in `keyPEM`; throws `invalidRequest` saying what
    /// is wrong when either does not parse or the key is not the leaf's.
    public init(certificatePEM: String, keyPEM: String) throws {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: certificatePEM).filter { $0.discriminator == "CERTIFICATE" }
        } catch {
            throw KioskError.invalidRequest("the certificate file is not PEM (\(error))")
        }
        guard let leafDocument = documents.first else {
            throw KioskError.invalidRequest("the certificate file holds no PEM CERTIFICATE block")
        }
        let leaf: Certificate
        let key: Certificate.PrivateKey
        do {
            leaf = try Certificate(derEncoded: leafDocument.derBytes)
        } catch {
            throw KioskError.invalidRequest("the certificate does not parse (\(error))")
        }
        do {
            key = try Certificate.PrivateKey(pemEncoded: keyPEM)
        } catch {
            throw KioskError.invalidRequest("the private key is not a PEM key Kiosk can read (\(error))")
        }
        // A mismatched pair would only fail at the first handshake, with an error no browser explains.
        guard key.publicKey == leaf.publicKey else {
            throw KioskError.invalidRequest("the private key is not the certificate's (their public keys differ)")
        }
        chain = documents.map(\.derBytes)
        privateKeyPEM = keyPEM
        fingerprint = Self.colonHex(SHA256.hash(data: leafDocument.derBytes))
        var serializer = DER.Serializer()
        try serializer.serialize(leaf.publicKey)
        publicKeyPin = Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
        notValidAfter = leaf.notValidAfter
        names = (try? leaf.extensions.subjectAlternativeNames)?.compactMap(Self.text) ?? []
    }

    /// The certificate and key in the files the user named; throws `invalidRequest` naming the file that
    /// cannot be read or used.
    public static func load(certificateFile: String, keyFile: String) throws -> TLSMaterial {
        func read(_ path: String, _ what: String) throws -> String {
            do {
                return try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw KioskError.invalidRequest("cannot read the \(what) \(path): \(KioskError.fileReason(error, path: path))")
            }
        }
        do {
            return try TLSMaterial(certificatePEM: try read(certificateFile, "certificate file"), keyPEM: try read(keyFile, "key file"))
        } catch KioskError.invalidRequest(let message) where !message.hasPrefix("cannot read") {
            throw KioskError.invalidRequest("\(certificateFile) and \(keyFile): \(message)")
        }
    }

    /// The server side of NIOSSL's configuration: this chain and key, TLS 1.2 at least, and for TLS 1.2 only
    /// forward-secret AEAD suites (Mozilla's "intermediate" list: ECDHE with AES-GCM or ChaCha20-Poly1305; no
    /// CBC, no RSA key exchange). TLS 1.3's suites are all AEAD.
    func serverConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try chain.map { .certificate(try NIOSSLCertificate(bytes: $0, format: .der)) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem)))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = ListenerPolicy.tls12CipherSuites
        return configuration
    }

    // MARK: - The self-signed certificate of `serve --lan`

    /// The certificate's file in the data directory.
    public static let certificateFileName = "lan-certificate.pem"
    /// The key's file in the data directory, readable by its owner only.
    public static let keyFileName = "lan-key.pem"
    /// How long a generated certificate lasts: under the 398 days browsers accept for a server certificate.
    static let lifetime: TimeInterval = 397 * 86_400

    /// What `selfSigned` did, for the terminal.
    public enum Provenance: Sendable, Equatable {
        /// The certificate already in the data directory is used again.
        case reused
        /// There was none: a new one was made.
        case created
        /// The stored one could not be used (the reason): a new one replaced it.
        case replacedUnreadable(String)
        /// The stored one expired on that date: a new one replaced it.
        case replacedExpired(Date)
    }

    /// The self-signed certificate kept in `directory`, made (with a new P-256 key) only when it is missing,
    /// unreadable or expired at `now`; a new one names `names` and `addresses` (the machine's) and lasts
    /// `lifetime`. The key file is created with mode 0600 before any byte is written to it.
    public static func selfSigned(in directory: URL, names: [String], addresses: [String],
                                  now: Date) throws -> (material: TLSMaterial, provenance: Provenance) {
        let certificateURL = directory.appendingPathComponent(certificateFileName)
        let keyURL = directory.appendingPathComponent(keyFileName)
        let provenance: Provenance
        let fileManager = FileManager.default
        if !fileManager.fileExists(atPath: certificateURL.path) && !fileManager.fileExists(atPath: keyURL.path) {
            provenance = .created
        } else {
            do {
                // A key others could read may have been copied: it is replaced, not served.
                if let mode = SecretFile.othersCanRead(keyURL.path) {
                    throw KioskError.invalidRequest("its key file was readable by others (mode \(String(mode, radix: 8)))")
                }
                let stored = try load(certificateFile: certificateURL.path, keyFile: keyURL.path)
                guard stored.notValidAfter > now else { throw Expired(date: stored.notValidAfter) }
                return (stored, .reused)
            } catch let expired as Expired {
                provenance = .replacedExpired(expired.date)
            } catch {
                provenance = .replacedUnreadable((error as? KioskError)?.description ?? String(describing: error))
            }
        }
        let (certificatePEM, keyPEM) = try generate(names: names, addresses: addresses, now: now)
        do {
            try SecretFile.makeFolder(directory)
            try SecretFile.write(keyPEM, to: keyURL)
            try Data(certificatePEM.utf8).write(to: certificateURL, options: .atomic)
        } catch let error as KioskError {
            // The folder refused (others may write to it): said in its own words.
            throw error
        } catch {
            throw KioskError.storage("cannot write the certificate to \(directory.path): \(KioskError.fileReason(error, path: directory.path))")
        }
        return (try TLSMaterial(certificatePEM: certificatePEM, keyPEM: keyPEM), provenance)
    }

    private struct Expired: Error { let date: Date }

    /// A new self-signed server certificate for `names` and `addresses` and its key, both PEM.
    static func generate(names: [String], addresses: [String], now: Date) throws -> (certificate: String, key: String) {
        let privateKey = P256.Signing.PrivateKey()
        let key = Certificate.PrivateKey(privateKey)
        let subject = try DistinguishedName {
            CommonName("Kiosk on \(names.first(where: { $0 != "localhost" }) ?? "this machine")")
            OrganizationName("Kiosk (self-signed)")
        }
        // Loopback always, so the machine itself (and a test) can check the certificate by name too.
        var alternativeNames: [GeneralName] = []
        for name in unique(["localhost"] + names) where !name.isEmpty { alternativeNames.append(.dnsName(name)) }
        for address in unique(["127.0.0.1", "::1"] + addresses).compactMap(IPAddress.init(literal:)) {
            alternativeNames.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(address.bytes))))
        }
        // No KeyUsage: with one, a self-signed leaf must also claim keyCertSign to be its own trust anchor
        // (what a client given this file as its root checks), which RFC 5280 reserves for CAs.
        let extensions = try Certificate.Extensions {
            Critical(BasicConstraints.notCertificateAuthority)
            try ExtendedKeyUsage([.serverAuth])
            SubjectAlternativeNames(alternativeNames)
        }
        // An hour's slack before now: a phone whose clock is a little behind still accepts it.
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: key.publicKey,
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(lifetime),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: key)
        return (try certificate.serializeAsPEM().pemString + "\n", privateKey.pemRepresentation + "\n")
    }

    private static func unique(_ values: [String]) -> [String] {
        var seen = Set<String>()
        return values.filter { seen.insert($0).inserted }
    }

    /// A digest as "AB:CD:…".
    static func colonHex(_ digest: some Sequence<UInt8>) -> String {
        digest.map { Hex.encode([$0]).uppercased() }.joined(separator: ":")
    }

    /// A DNS name or an IP address of a SAN as text; nil for other kinds.
    private static func text(_ name: GeneralName) -> String? {
        switch name {
        case .dnsName(let name): name
        case .ipAddress(let octets): IPAddress(bytes: Array(octets.bytes))?.description
        default: nil
        }
    }
}

/// The machine's names and addresses, for the URLs `serve --lan` prints and the names its certificate carries.
public enum MachineAddresses {
    /// Every non-loopback IPv4 and IPv6 address of the machine's interfaces, IPv4 first, without duplicates.
    /// Link-local IPv6 addresses (fe80::/10) are left out: a URL needs their zone, which browsers do not take.
    public static func current() -> [IPAddress] {
        let devices = (try? System.enumerateDevices()) ?? []
        var seen = Set<IPAddress>()
        let addresses = devices.compactMap { device -> IPAddress? in
            guard let text = device.address?.ipAddress, let address = IPAddress(literal: text), !address.isLoopback,
                  !(address.bytes.count == 16 && address.bytes[0] == 0xFE && address.bytes[1] & 0xC0 == 0x80),
                  !address.bytes.allSatisfy({ $0 == 0 }) else { return nil }
            return seen.insert(address).inserted ? address : nil
        }
        return addresses.filter { $0.bytes.count == 4 } + addresses.filter { $0.bytes.count == 16 }
    }

    /// The networks of the machine's other addresses (outside local ranges, which every listener off loopback
    /// serves anyway): the hosts there are the machine's neighbours, which `serve --lan` serves as it serves
    /// private ranges. An IPv4 network is its interface's (netmask), but never wider than a /16; an IPv6 one is
    /// the address's /64, the size of one link's network (a netmask of a tunnel may be far wider, and a DHCPv6
    /// /128 would leave the link's phones out). Tunnel addresses (6to4, Teredo) are not networks of neighbours.
    public static func networks() -> [IPNetwork] {
        let devices = (try? System.enumerateDevices()) ?? []
        var seen = Set<IPNetwork>()
        return devices.compactMap { device -> IPNetwork? in
            guard let address = device.address?.ipAddress.flatMap(IPAddress.init(literal:)),
                  let network = neighbours(of: address, netmask: device.netmask?.ipAddress.flatMap(IPAddress.init(literal:)))
            else { return nil }
            return seen.insert(network).inserted ? network : nil
        }
    }

    /// The network of neighbours an interface address with `netmask` stands for (see `networks()`), or nil.
    static func neighbours(of address: IPAddress, netmask: IPAddress?) -> IPNetwork? {
        guard !address.isLoopbackPeer, !address.isLocalNetworkPeer, !address.bytes.allSatisfy({ $0 == 0 }),
              !IPNetwork.tunnels.contains(where: { $0.contains(address) }) else { return nil }
        if address.bytes.count == 16 { return IPNetwork(address, prefixLength: 64) }
        let prefix = netmask.flatMap { IPNetwork(address, netmask: $0) }?.prefixLength ?? 32
        return IPNetwork(address, prefixLength: max(16, prefix))
    }

    /// The global addresses among `addresses`: public ones, reachable from the whole internet unless a firewall
    /// stands in between (not local, reserved or documentation ranges).
    public static func global(_ addresses: [IPAddress]) -> [IPAddress] {
        addresses.filter { $0.nonPublicReason == nil }
    }

    /// The names a certificate for this machine carries: `localhost`, the host name, and its `.local`
    /// (mDNS) form when the host name has no domain.
    public static func names() -> [String] {
        var buffer = [CChar](repeating: 0, count: 256)
        var names = ["localhost"]
        if gethostname(&buffer, buffer.count - 1) == 0 {
            let host = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self).lowercased()
            if !host.isEmpty, host != "localhost" {
                names.append(host)
                if !host.contains(".") { names.append(host + ".local") }
            }
        }
        return names
    }

    /// `https://ADDRESS:PORT/`, with an IPv6 address in brackets.
    public static func url(_ address: IPAddress, port: Int) -> String {
        address.bytes.count == 16 ? "https://[\(address)]:\(port)/" : "https://\(address):\(port)/"
    }
}
