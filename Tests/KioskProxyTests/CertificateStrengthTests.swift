import _CryptoExtras
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@testable import KioskNetwork

@Suite("An upstream's certificate too weak to trust")
struct CertificateStrengthTests {
    /// A certificate for localhost with `key`, signed with `signature` by `signer` — by itself when `issuer` is nil —, naming
    /// localhost in a subjectAltName as well as its CN unless `commonNameOnly`.
    static func certificate(key: Certificate.PublicKey, signature: Certificate.SignatureAlgorithm, signer: Certificate.PrivateKey,
                            issuer: DistinguishedName? = nil, commonNameOnly: Bool = false) throws -> [UInt8] {
        let subject = try DistinguishedName { CommonName("localhost") }
        var serializer = DER.Serializer()
        try serializer.serialize(try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key, notValidBefore: Date(), notValidAfter: Date().addingTimeInterval(3600),
            issuer: issuer ?? subject, subject: subject, signatureAlgorithm: signature,
            extensions: commonNameOnly ? Certificate.Extensions() : try Certificate.Extensions { SubjectAlternativeNames([.dnsName("localhost")]) },
            issuerPrivateKey: signer))
        return serializer.serializedBytes
    }

    @Test("A certificate signed with SHA-1 by another is too weak; one signed with SHA-256 is not")
    func sha1Signature() throws {
        // Given an RSA issuer of 2048 bits and a P-256 leaf
        let issuerKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let leaf = P256.Signing.PrivateKey()
        let issuer = try DistinguishedName { CommonName("An issuer") }
        // When the leaf is signed with SHA-1, and again with SHA-256
        let sha1 = try Self.certificate(key: .init(leaf.publicKey), signature: .sha1WithRSAEncryption, signer: .init(issuerKey), issuer: issuer)
        let sha256 = try Self.certificate(key: .init(leaf.publicKey), signature: .sha256WithRSAEncryption, signer: .init(issuerKey), issuer: issuer)
        // Then the first is weak for its hash, the second not at all
        #expect(CertificateStrength.weakness(ofDER: sha1) == "it is signed with SHA-1, which browsers and curl refuse")
        #expect(CertificateStrength.weakness(ofDER: sha256) == nil)
    }

    @Test("A self-signed certificate (a root the user trusts) is not refused for its SHA-1, but is for an RSA key under 2048 bits")
    func selfSigned() throws {
        // Given self-signed SHA-1 certificates with RSA keys of 2048 and 1024 bits
        let strong = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let small = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
        let strongDER = try Self.certificate(key: .init(strong.publicKey), signature: .sha1WithRSAEncryption, signer: .init(strong))
        let smallDER = try Self.certificate(key: .init(small.publicKey), signature: .sha1WithRSAEncryption, signer: .init(small))
        // Then the 2048-bit one passes (its own signature does not make it trusted) and the 1024-bit one is weak for its key
        #expect(CertificateStrength.weakness(ofDER: strongDER) == nil)
        #expect(CertificateStrength.weakness(ofDER: smallDER) == "its RSA key has 1024 bits, where browsers and curl want 2048 at least")
    }

    @Test("A certificate naming its host only in its subject's CN, without a subjectAltName, is refused as browsers refuse it")
    func commonNameOnly() throws {
        // Given a P-256 leaf for localhost, signed with SHA-256, naming localhost in its CN alone, and the same with a SAN
        let issuerKey = P256.Signing.PrivateKey(), leaf = P256.Signing.PrivateKey()
        let issuer = try DistinguishedName { CommonName("An issuer") }
        let bare = try Self.certificate(key: .init(leaf.publicKey), signature: .ecdsaWithSHA256, signer: .init(issuerKey), issuer: issuer,
                                        commonNameOnly: true)
        let named = try Self.certificate(key: .init(leaf.publicKey), signature: .ecdsaWithSHA256, signer: .init(issuerKey), issuer: issuer)
        // Then the first is refused for it, the second not
        #expect(CertificateStrength.weakness(ofDER: bare)
                == "it names its host only in its subject's common name, without a subjectAltName, which browsers refuse")
        #expect(CertificateStrength.weakness(ofDER: named) == nil)
    }

    @Test("An --upstream-ca whose root has an RSA key under 2048 bits is refused at start, naming the file and why; a strong one is taken")
    func weakRootRefused() throws {
        // Given PEM files of self-signed roots with RSA keys of 1024 and 2048 bits
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-roots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func pem(bits: Int, name: String) throws -> String {
            let key = try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: bits))
            let der = try Self.certificate(key: .init(key.publicKey), signature: .sha256WithRSAEncryption, signer: .init(key))
            let path = folder.appendingPathComponent(name).path
            let body = Data(der).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            try Data("-----BEGIN CERTIFICATE-----\n\(body)\n-----END CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let weak = try pem(bits: 1024, name: "weak.pem"), strong = try pem(bits: 2048, name: "strong.pem")
        // When each is checked as an --upstream-ca
        // Then the weak one is refused, saying why, and the strong one taken
        #expect(TransportConfiguration.trustRootProblem(atPath: weak)
                == "\(weak) holds a certificate Kiosk will not trust: its RSA key has 1024 bits, where browsers and curl want 2048 at least")
        #expect(TransportConfiguration.trustRootProblem(atPath: strong) == nil)
    }

    @Test("Bytes that are not a certificate are not called weak: BoringSSL read them, and what this reader cannot is not a weakness")
    func unreadable() {
        #expect(CertificateStrength.weakness(ofDER: []) == nil)
        #expect(CertificateStrength.weakness(ofDER: [0x30, 0x03, 0x02, 0x01, 0x01]) == nil)
    }

    @Test("A certificate's DNS name covers a host as browsers match it: the name in any case, a final dot aside; *. one label more, never less nor two")
    func namesCoverHosts() {
        let covered = [("api.example.com", "API.Example.com"), ("api.example.com.", "api.example.com"), ("*.example.com", "api.example.com"),
                       ("*.Example.com", "a-b.example.com.")]
        let uncovered = [("api.example.com", "example.com"), ("*.example.com", "example.com"), ("*.example.com", "a.b.example.com"),
                         ("*.com", "example.com"), ("f*.example.com", "foo.example.com"), ("*.*.com", "a.b.com"), ("*.example.com", ".example.com"),
                         ("localhost", "vm")]
        for (pattern, host) in covered { #expect(CertificateStrength.name(pattern, covers: host), "\(pattern) \(host)") }
        for (pattern, host) in uncovered { #expect(!CertificateStrength.name(pattern, covers: host), "\(pattern) \(host)") }
    }
}
