import SwiftASN1

/// A trust store Java reads: a PKCS #12 file (RFC 7292) of certificates alone, with no password and no MAC, each
/// certificate marked trusted for any use by Oracle's attribute — what `keytool -importcert` makes of a CA, and what a
/// JVM started with `-Djavax.net.ssl.trustStore=FILE -Djavax.net.ssl.trustStoreType=PKCS12` trusts. Java reads none of
/// the variables other programs take their roots from (SSL_CERT_FILE and the rest), and a PEM file is no keystore.
public enum JavaTrustStore {
    /// The file's name in the data directory, beside the CA.
    public static let fileName = "kiosk-proxy-truststore.p12"

    /// The PKCS #12 bytes of `pem`'s certificates (a bundle: the system's roots and Kiosk's CA), each under an alias
    /// made of `aliasPrefix` and its place, the last under `lastAlias` (Kiosk's CA, so that `keytool -list` names it).
    public static func pkcs12(pem: String, aliasPrefix: String = "root-", lastAlias: String = "kiosk-proxy-ca") throws -> [UInt8] {
        let certificates = try PEMDocument.parseMultiple(pemString: pem).filter { $0.discriminator == "CERTIFICATE" }
        var bags = DER.Serializer()
        try bags.appendConstructedNode(identifier: .sequence) { contents in
            for (index, certificate) in certificates.enumerated() {
                let alias = index == certificates.count - 1 ? lastAlias : aliasPrefix + String(index + 1)
                try certificateBag(certificate.derBytes, alias: alias, into: &contents)
            }
        }
        // The bags in one unencrypted ContentInfo of the AuthenticatedSafe, which is itself the PFX's data.
        var authenticatedSafe = DER.Serializer()
        try authenticatedSafe.appendConstructedNode(identifier: .sequence) { safe in
            try data(bags.serializedBytes, into: &safe)
        }
        var pfx = DER.Serializer()
        try pfx.appendConstructedNode(identifier: .sequence) { pfx in
            try pfx.serialize(3)
            try data(authenticatedSafe.serializedBytes, into: &pfx)
        }
        return pfx.serializedBytes
    }

    /// A SafeBag holding one certificate: its `friendlyName` (the alias) and Oracle's trusted-key-usage attribute
    /// (anyExtendedKeyUsage), without which Java takes a bag of a certificate for no trusted entry at all.
    private static func certificateBag(_ der: [UInt8], alias: String, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { bag in
            try bag.serialize(certBag)
            try bag.serialize(explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific) { value in
                try value.appendConstructedNode(identifier: .sequence) { certificate in
                    try certificate.serialize(x509Certificate)
                    try certificate.serialize(ASN1OctetString(contentBytes: der[...]), explicitlyTaggedWithTagNumber: 0,
                                              tagClass: .contextSpecific)
                }
            }
            try bag.appendConstructedNode(identifier: .set) { attributes in
                try attributes.appendConstructedNode(identifier: .sequence) { attribute in
                    try attribute.serialize(friendlyName)
                    let utf16 = alias.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
                    try attribute.appendConstructedNode(identifier: .set) { try $0.serialize(ASN1BMPString(contentBytes: utf16[...])) }
                }
                try attribute(trustedKeyUsage, anyExtendedKeyUsage, into: &attributes)
            }
        }
    }

    private static func attribute(_ id: ASN1ObjectIdentifier, _ value: ASN1ObjectIdentifier, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { attribute in
            try attribute.serialize(id)
            try attribute.appendConstructedNode(identifier: .set) { try $0.serialize(value) }
        }
    }

    /// A ContentInfo of type data (PKCS #7) holding `bytes`.
    private static func data(_ bytes: [UInt8], into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { info in
            try info.serialize(pkcs7Data)
            try info.serialize(ASN1OctetString(contentBytes: bytes[...]), explicitlyTaggedWithTagNumber: 0, tagClass: .contextSpecific)
        }
    }

    private static let pkcs7Data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
    private static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
    private static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 22, 1]
    private static let friendlyName: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 20]
    /// Oracle's `trustedKeyUsage` bag attribute (what keytool writes on a trusted certificate entry).
    private static let trustedKeyUsage: ASN1ObjectIdentifier = [2, 16, 840, 1, 113_894, 746_875, 1, 1]
    private static let anyExtendedKeyUsage: ASN1ObjectIdentifier = [2, 5, 29, 37, 0]
}
