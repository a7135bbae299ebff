import Foundation
import KioskCore
import NIOCore
import NIOHTTP2
import NIOHTTPCompression
import Testing
@testable import KioskNetwork

@Suite("How a failed exchange is put in words")
struct TransportFailureTests {
    @Test("Out of open files, a connection that could not be opened says so and names the limit, not the upstream")
    func outOfFiles() {
        // Given the error NIO throws when socket(2) fails with EMFILE
        let error = IOError(errnoCode: EMFILE, reason: "socket(domain:type:protocolSubtype:)")
        // When it is classified
        let classified = UpstreamTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: nil, received: 0)
        // Then it is a transport failure naming the open-file limit, not "could not connect to example.test"
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains("open-file limit, ulimit -n, is "), "\(message)")
        #expect(!message.contains("socket(domain"))
    }

    @Test("A body whose gzip expands past the limit (a decompression bomb) says so, not that it was cut short",
          arguments: [(NIOHTTPDecompression.DecompressionError.limit, KioskError.AnswerProblem.expandsTooMuch(ratio: 50),
                       "decompression bomb"),
                      (.inflationError(-3), .corruptCoding, "is corrupt: it cannot be decoded")])
    func decompression(error: NIOHTTPDecompression.DecompressionError, problem: KioskError.AnswerProblem, says: String) {
        // Given the error the decompressor gives part way through a declared 1 MB body
        let classified = UpstreamTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: 1_043_661, received: 0)
        // Then it is an answer refused for its coding, not "received 0 of 1043661 bytes", nor worth asking again
        #expect(classified == .unreadableAnswer(url: "http://example.test/", problem: problem))
        #expect(classified.description.contains(says), "\(classified)")
        #expect(!classified.isRetryable)
    }

    @Test("An HTTP/2 upstream's failures are said in words, never as NIO's Swift values, and a wrong length is not a count of bytes",
          arguments: [(NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(13), errorCode: .internalError) as any Error,
                       "the HTTP/2 stream of the answer was reset (INTERNAL_ERROR)"),
                      (NIOHTTP2Errors.streamClosed(streamID: HTTP2StreamID(1), errorCode: .protocolError), "(PROTOCOL_ERROR)"),
                      (NIOHTTP2Errors.contentLengthViolated(), "a body of another length than its content-length says"),
                      (NIOHTTP2Errors.forbiddenHeaderField(name: "transfer-encoding", value: "chunked"), "carries transfer-encoding, a field HTTP/2 forbids"),
                      (NIOHTTP2Errors.missingPseudoHeader(":status"), "the upstream broke HTTP/2 (missing pseudo header)")])
    func http2(error: any Error, says: String) {
        // Given what NIO's HTTP/2 codec throws for an answer of a declared 1,000 bytes
        let classified = UpstreamTransport.classify(error, url: "https://example.test/", host: "example.test",
                                                     expectedLength: 1_000, received: 0)
        // Then the words say what happened, not "StreamClosed(streamID: …)" nor "after 0 of 1000 bytes"
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains(says) && !message.contains("HTTP2StreamID") && !message.contains("location:"), "\(message)")
    }

    @Test("An HTTP proxy that refuses a tunnel is named with its status, not taken for the upstream being offline")
    func tunnelRefused() {
        // Given the error the client gives when the outbound proxy answers CONNECT with 403
        let classified = UpstreamTransport.classify(UpstreamError.tunnelRefused(status: 403), url: "https://example.test/",
                                                     host: "example.test", expectedLength: nil, received: 0)
        // Then it says the proxy refused, with the status, and is no "offline" (which a cache takes for an unreachable upstream)
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains("the HTTP proxy refused to open a tunnel to example.test (its status 403)"), "\(message)")
    }

    @Test("A certificate BoringSSL refuses for its own make (key usage, its type) is a trust failure, which no stored answer hides; other handshake failures are not",
          arguments: [
            ("KEY_USAGE_BIT_INCORRECT", "the upstream's certificate for up.test does not allow its key to sign", true),
            ("BAD_ECC_CERT", "the upstream's certificate for up.test cannot be used for TLS (BAD_ECC_CERT)", true),
            ("CERTIFICATE_VERIFY_FAILED", "the upstream's certificate for up.test is not trusted", true),
            ("UNSUPPORTED_PROTOCOL", "up.test speaks only TLS older than 1.2", true),
            ("CERTIFICATE_REQUIRED", "up.test asks for a client certificate", false),
            ("WRONG_VERSION_NUMBER", "up.test did not answer in TLS on that port", false),
            ("DECODE_ERROR", "the TLS handshake with up.test failed (DECODE_ERROR)", false),
          ] as [(String, String, Bool)])
    func certificateRefusals(reason: String, words: String, trust: Bool) {
        // Given BoringSSL's description of a failed handshake
        let text = "error:1000010b:SSL routines:OPENSSL_internal:\(reason) at /src/ssl/handshake.cc:123"
        // When it is put in words
        let said = UpstreamTransport.tlsFailure(described: text, host: "up.test")
        // Then the words say what failed, never BoringSSL's source path, and whether the upstream could be trusted
        #expect(said.hasPrefix(words), "\(said)")
        #expect(!said.contains("handshake.cc"))
        #expect(UpstreamTransport.isTrustFailure(said) == trust, "\(said)")
    }

    @Test("Out of files system-wide (ENFILE) says the system's limit")
    func systemOutOfFiles() {
        let classified = UpstreamTransport.classify(IOError(errnoCode: ENFILE, reason: "socket"), url: "http://example.test/",
                                                     host: "example.test", expectedLength: nil, received: 0)
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains("the system has as many files open as it allows"), "\(message)")
    }

    @Test("An upstream that resets the connection is said to have reset it, not in the words of the system call that saw it")
    func reset() {
        // Given the error NIO throws when a read meets a TCP reset
        let error = IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)")
        // When it is classified
        let classified = UpstreamTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: nil, received: 0)
        // Then it is a transport failure that says the upstream reset the connection, without NIO's call
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message == "the upstream reset the connection (ECONNRESET) before its answer was complete")
    }

    @Test("A reset after part of a body with a known length is a truncated answer, with the bytes received")
    func resetMidBody() {
        let classified = UpstreamTransport.classify(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"),
                                                     url: "http://example.test/", host: "example.test", expectedLength: 100,
                                                     received: 7)
        guard case .truncatedBody(_, let expected, let received) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(expected == 100 && received == 7)
    }
}
