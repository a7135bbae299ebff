import Crypto
import Foundation

/// Marvel's request signature, `md5(ts + privateKey + publicKey)` in lowercase hex, computed with swift-crypto's
/// MD5 rather than by the code under test (KioskSources signs requests, KioskDemoUpstream checks them).
public enum MarvelSignature {
    public static func hash(timestamp: String, privateKey: String, publicKey: String) -> String {
        Insecure.MD5.hash(data: Data((timestamp + privateKey + publicKey).utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
