import _CryptoExtras
import Crypto
import Foundation
import KioskTestSupport
import NIOSSL
import SwiftASN1
import X509

/// The tests' own CA, standing for the public roots an app's real upstream chains to: it signs the HTTPS upstream's
/// certificate (localhost, 127.0.0.1), and Kiosk's proxy is told to trust it (`--upstream-ca`).
final class TestAuthority: Sendable {
    static let shared = try! TestAuthority()

    /// The CA certificate as a PEM file.
    let certificateFile: URL
    private let leafPEM: String
    private let leafKeyPEM: String
    /// A leaf for localhost from the same CA that expired a day ago.
    private let expiredLeafPEM: String
    /// A leaf for localhost from the same CA for clients alone (its extended key usage clientAuth): no server's.
    private let clientLeafPEM: String
    /// Leaves for localhost that BoringSSL's chain check lets pass and browsers refuse, each with its key's PEM.
    private let weakLeaves: [WeakLeaf: (certificate: String, key: String)]

    /// A leaf too weak to trust, though a trusted CA signed it.
    enum WeakLeaf: CaseIterable {
        /// Signed with SHA-1 (by a second CA of the tests', an RSA one, trusted as the first is).
        case sha1
        /// Its key RSA of 1024 bits.
        case rsa1024
    }

    private init() throws {
        let now = Date()
        /// A CA certificate named `name` for `key`, signed by itself.
        func authority(_ name: DistinguishedName, key: Certificate.PrivateKey, signature: Certificate.SignatureAlgorithm) throws -> Certificate {
            try Certificate(
                version: .v3, serialNumber: .init(), publicKey: key.publicKey,
                notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
                issuer: name, subject: name, signatureAlgorithm: signature,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(keyCertSign: true))
                    SubjectKeyIdentifier(hash: key.publicKey)
                },
                issuerPrivateKey: key)
        }
        /// A leaf for localhost (and 127.0.0.1) with `key`, signed by `signer`, as PEM.
        func leaf(_ key: Certificate.PublicKey, issuer: DistinguishedName, signer: Certificate.PrivateKey,
                  signature: Certificate.SignatureAlgorithm, from start: TimeInterval = -3600, to end: TimeInterval = 86_400,
                  usage: ExtendedKeyUsage.Usage = .serverAuth) throws -> String {
            try Certificate(
                version: .v3, serialNumber: .init(), publicKey: key,
                notValidBefore: now.addingTimeInterval(start), notValidAfter: now.addingTimeInterval(end),
                issuer: issuer, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: signature,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    try ExtendedKeyUsage([usage])
                    SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                },
                issuerPrivateKey: signer).serializeAsPEM().pemString
        }
        let caKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
        let caName = try DistinguishedName { CommonName("Kiosk tests' upstream CA") }
        let ca = try authority(caName, key: caKey, signature: .ecdsaWithSHA256)
        let leafKey = P256.Signing.PrivateKey()
        leafPEM = try leaf(.init(leafKey.publicKey), issuer: caName, signer: caKey, signature: .ecdsaWithSHA256)
        leafKeyPEM = leafKey.pemRepresentation
        expiredLeafPEM = try leaf(.init(leafKey.publicKey), issuer: caName, signer: caKey, signature: .ecdsaWithSHA256,
                                  from: -3 * 86_400, to: -86_400)
        clientLeafPEM = try leaf(.init(leafKey.publicKey), issuer: caName, signer: caKey, signature: .ecdsaWithSHA256, usage: .clientAuth)
        // SHA-1 signatures are RSA's here (swift-certificates signs no ECDSA with SHA-1): an RSA CA beside the first.
        let rsaCAKey = Certificate.PrivateKey(try _RSA.Signing.PrivateKey(keySize: .bits2048))
        let rsaCAName = try DistinguishedName { CommonName("Kiosk tests' RSA upstream CA") }
        let rsaCA = try authority(rsaCAName, key: rsaCAKey, signature: .sha256WithRSAEncryption)
        let smallKey = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        weakLeaves = [
            .sha1: (try leaf(.init(leafKey.publicKey), issuer: rsaCAName, signer: rsaCAKey, signature: .sha1WithRSAEncryption),
                    leafKey.pemRepresentation),
            .rsa1024: (try leaf(.init(smallKey.publicKey), issuer: caName, signer: caKey, signature: .ecdsaWithSHA256),
                       smallKey.pemRepresentation),
        ]
        let folder = TemporaryDirectory.url("kiosk-test-ca")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        certificateFile = folder.appendingPathComponent("test-ca.pem")
        try (try ca.serializeAsPEM().pemString + "\n" + rsaCA.serializeAsPEM().pemString + "\n")
            .write(to: certificateFile, atomically: true, encoding: .utf8)
    }

    /// A server's own self-signed certificate for localhost whose key usage is digitalSignature alone (as some
    /// development tools make theirs), with a TLS server context presenting it and a PEM file of it for --upstream-ca.
    /// `expired`: it ended yesterday.
    static func selfSignedNonCA(expired: Bool = false) throws -> (context: NIOSSLContext, file: URL) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(expired ? -3 * 86_400 : -3600),
            notValidAfter: Date().addingTimeInterval(expired ? -86_400 : 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key))
        let pem = try certificate.serializeAsPEM().pemString
        let folder = TemporaryDirectory.url("kiosk-test-self-signed")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("server.pem")
        try pem.write(to: file, atomically: true, encoding: .utf8)
        let configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem)))
        return (try NIOSSLContext(configuration: configuration), file)
    }

    /// A TLS server context presenting the upstream's leaf, or (`expired`) one that expired yesterday, or (`clientOnly`) one
    /// for clients alone, offering the ALPN protocols `alpn` (none: HTTP/1.1 without ALPN).
    func upstreamContext(expired: Bool = false, clientOnly: Bool = false, weak: WeakLeaf? = nil, alpn: [String] = [],
                         maximumVersion: TLSVersion? = nil, requiresClientCertificate: Bool = false) throws -> NIOSSLContext {
        let (certificate, key) = weak.flatMap { weakLeaves[$0] }
            ?? (expired ? expiredLeafPEM : clientOnly ? clientLeafPEM : leafPEM, leafKeyPEM)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificate.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)))
        configuration.applicationProtocols = alpn
        if requiresClientCertificate {
            // A client without one of the CA's certificates is refused: in TLS 1.3, after the client's side of the handshake.
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .file(certificateFile.path)
        }
        if let maximumVersion {
            configuration.minimumTLSVersion = .tlsv1
            configuration.maximumTLSVersion = maximumVersion
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
