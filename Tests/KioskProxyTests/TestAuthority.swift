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

    private init() throws {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Kiosk tests' upstream CA") }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: caName, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
                SubjectKeyIdentifier(hash: .init(caKey.publicKey))
            },
            issuerPrivateKey: .init(caKey))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(caKey))
        let expired = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now.addingTimeInterval(-3 * 86_400), notValidAfter: now.addingTimeInterval(-86_400),
            issuer: caName, subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(caKey))
        expiredLeafPEM = try expired.serializeAsPEM().pemString
        let folder = TemporaryDirectory.url("kiosk-test-ca")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        certificateFile = folder.appendingPathComponent("test-ca.pem")
        try (try ca.serializeAsPEM().pemString + "\n").write(to: certificateFile, atomically: true, encoding: .utf8)
        leafPEM = try leaf.serializeAsPEM().pemString
        leafKeyPEM = leafKey.pemRepresentation
    }

    /// A TLS server context presenting the upstream's leaf, or (`expired`) one that expired yesterday, offering the
    /// ALPN protocols `alpn` (none: HTTP/1.1 without ALPN).
    func upstreamContext(expired: Bool = false, alpn: [String] = [], maximumVersion: TLSVersion? = nil) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array((expired ? expiredLeafPEM : leafPEM).utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(leafKeyPEM.utf8), format: .pem)))
        configuration.applicationProtocols = alpn
        if let maximumVersion {
            configuration.minimumTLSVersion = .tlsv1
            configuration.maximumTLSVersion = maximumVersion
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
