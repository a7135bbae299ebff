import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Why an upstream's certificate was not trusted, which BoringSSL reports only as "CERTIFICATE_VERIFY_FAILED": the
/// certificate is fetched again over a handshake that checks nothing, and its dates and issuer read. The connection
/// dials the addresses it is given (the refused exchange's host's, checked as its were: DialAddresses.swift), sends
/// nothing but a TLS hello, and is closed at once.
enum CertificateDiagnosis {
    /// "it expired on …", "it is not valid until …" or "it was issued by …, not among the trusted roots", for `host`'s
    /// certificate at `addresses`; nil when it cannot be fetched within a few seconds. `roots` are the --upstream-ca files:
    /// a certificate one of them holds, refused all the same, is one that may not sign certificates.
    static func reason(host: String, dialling addresses: [SocketAddress], trusting roots: [String] = [], now: Date = Date()) async -> String? {
        guard let certificate = try? await peerCertificate(host: host, addresses: addresses) else { return nil }
        let format = Date.ISO8601FormatStyle().year().month().day()
        let notAfter = Date(timeIntervalSince1970: TimeInterval(certificate.notValidAfter))
        let notBefore = Date(timeIntervalSince1970: TimeInterval(certificate.notValidBefore))
        if now > notAfter { return "it expired on \(notAfter.formatted(format))" }
        if now < notBefore { return "it is not valid until \(notBefore.formatted(format))" }
        // A server's own self-signed certificate given to --upstream-ca, in date: BoringSSL takes it as its own issuer only
        // if its key usage, when it has one, allows signing certificates (keyCertSign), where curl's OpenSSL takes it regardless.
        let selfSigned = certificate.issuerName == certificate.subjectName
        if selfSigned, let der = try? certificate.toDERBytes(),
           let file = roots.first(where: { path in
               ((try? NIOSSLCertificate.fromPEMFile(path)) ?? []).contains { (try? $0.toDERBytes()) == der }
           }) {
            return "it is the certificate \(file) (--upstream-ca) holds, but its key usage leaves out signing certificates "
                + "(keyCertSign), which Kiosk wants of a root, self-signed or not: make it again without a key usage or with "
                + "keyCertSign (`openssl req -x509 -addext \"subjectAltName=DNS:\(host)\"` does: no key usage by default, and the name "
                + "where clients look for it), or give --upstream-ca the CA that issued it"
        }
        let trusted = roots.flatMap { path in ((try? NIOSSLCertificate.fromPEMFile(path)) ?? []).map { (path, $0) } }
        // The server's own certificate given as a root: BoringSSL takes only a CA's (or a self-signed one) as an anchor.
        if let der = try? certificate.toDERBytes(), let (file, _) = trusted.first(where: { (try? $0.1.toDERBytes()) == der }) {
            return "it is the certificate \(file) (--upstream-ca) holds, which is the server's own, issued by a CA: give "
                + "--upstream-ca the CA that issued it"
        }
        let issuer = certificate.issuerName.map(\.value).first(where: { !$0.isEmpty }) ?? "an unnamed issuer"
        // Issued by a root the user trusts: the fault is that root's dates or the certificate itself, not the trust.
        if let (file, root) = trusted.first(where: { $0.1.subjectName == certificate.issuerName }) {
            let rootExpiry = Date(timeIntervalSince1970: TimeInterval(root.notValidAfter))
            if now > rootExpiry {
                return "it was issued by \(issuer), whose certificate in \(file) (--upstream-ca) expired on \(rootExpiry.formatted(format))"
            }
            return "it was issued by \(issuer), which \(file) (--upstream-ca) trusts, but it is not a certificate for a server "
                + "(its extended key usage leaves out serverAuth, or its key usage the signatures TLS needs) or its chain is broken"
        }
        // BoringSSL says no more of a chain that does not verify: when the issuer is trusted after all, the fault is
        // further along, which the words say too rather than blame a root the user has trusted.
        return "it was issued by \(issuer), which is not among the trusted roots (the system's, and any --upstream-ca) — or, "
            + "if it is, an intermediate between them is missing or expired, or the certificate is not one for a server"
    }

    private static func peerCertificate(host: String, addresses: [SocketAddress]) async throws -> NIOSSLCertificate? {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = .none
        let context = try NIOSSLContext(configuration: configuration)
        let group = MultiThreadedEventLoopGroup.singleton
        let eventLoop = group.next()
        let handshake = eventLoop.makePromise(of: Void.self)
        let channel = try await ClientBootstrap(group: eventLoop)
            .connectTimeout(.seconds(3))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let name = host.contains(":") || host.allSatisfy({ $0.isNumber || $0 == "." }) ? nil : host
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: context, serverHostname: name))
                    try channel.pipeline.syncOperations.addHandler(HandshakeDone(promise: handshake))
                }
            }
            .resolver(FixedAddresses(addresses, on: eventLoop))
            .connect(host: host, port: addresses.first?.port ?? 443).get()
        defer { channel.close(promise: nil) }
        let timeout = eventLoop.scheduleTask(in: .seconds(3)) { handshake.fail(ChannelError.connectTimeout(.seconds(3))) }
        defer { timeout.cancel() }
        try await handshake.futureResult.get()
        return try await channel.nioSSL_peerCertificate().get()
    }

    /// Completes its promise when the handshake is done, or fails it.
    private final class HandshakeDone: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let promise: EventLoopPromise<Void>

        init(promise: EventLoopPromise<Void>) { self.promise = promise }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted? = event as? TLSUserEvent { promise.succeed() }
            context.fireUserInboundEventTriggered(event)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            promise.fail(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            promise.fail(ChannelError.eof)
            context.fireChannelInactive()
        }
    }
}
