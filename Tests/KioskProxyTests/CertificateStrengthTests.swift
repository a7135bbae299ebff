import _CryptoExtras
import Crypto
import Foundation
import SwiftASN1
import Testing
import X509
@testable import KioskNetwork

@Suite("An upstream's certificate too weak to trust")
struct CertificateStrengthTests {
    /// A certificate for localhost with `key`, signed with `signature` by `signer` — by itself when `issuer` is nil.
    static func certificate(key: Certificate.PublicKey, signature: Certificate.SignatureAlgorithm, signer: Certificate.PrivateKey,
                            issuer: DistinguishedName? = nil) throws -> [UInt8] {
        let subject = try DistinguishedName { CommonName("localhost") }
        var serializer = DER.Serializer()
        try serializer.serialize(try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key, notValidBefore: Date(), notValidAfter: Date().addingTimeInterval(3600),
            issuer: issuer ?? subject, subject: subject, signatureAlgorithm: signature,
            extensions: Certificate.Extensions(), issuerPrivateKey: signer))
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

    @Test("Bytes that are not a certificate are not called weak: BoringSSL read them, and what this reader cannot is not a weakness")
    func unreadable() {
        #expect(CertificateStrength.weakness(ofDER: []) == nil)
        #expect(CertificateStrength.weakness(ofDER: [0x30, 0x03, 0x02, 0x01, 0x01]) == nil)
    }
}
