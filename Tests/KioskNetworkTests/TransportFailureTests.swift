import AsyncHTTPClient
import Foundation
import KioskCore
import NIOCore
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
        let classified = AsyncHTTPTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: nil, received: 0, timeout: .seconds(15))
        // Then it is a transport failure naming the open-file limit, not "could not connect to example.test"
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains("open-file limit, ulimit -n, is "), "\(message)")
        #expect(!message.contains("socket(domain"))
    }

    @Test("A body whose gzip expands past the limit (a decompression bomb) says so, not that it was cut short",
          arguments: [(NIOHTTPDecompression.DecompressionError.limit, "decompression bomb"),
                      (.inflationError(-3), "is corrupt: it cannot be decoded")])
    func decompression(error: NIOHTTPDecompression.DecompressionError, says: String) {
        // Given the error the decompressor gives part way through a declared 1 MB body
        let classified = AsyncHTTPTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: 1_043_661, received: 0, timeout: .seconds(15))
        // Then it says what was wrong with the coding, not "received 0 of 1043661 bytes"
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains(says), "\(message)")
    }

    @Test("Waiting too long for one of the pool's busy connections is not the upstream being offline")
    func poolFull() {
        // Given the error AsyncHTTPClient gives a request that found no connection of the pool free in time
        let classified = AsyncHTTPTransport.classify(HTTPClientError.getConnectionFromPoolTimeout, url: "http://example.test/",
                                                     host: "example.test", expectedLength: nil, received: 0, timeout: .seconds(15))
        // Then it says the connections were busy, and is no "offline" (which a cache takes for an unreachable upstream)
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message.contains("no connection to example.test came free in time"), "\(message)")
    }

    @Test("Out of files system-wide (ENFILE) says the system's limit")
    func systemOutOfFiles() {
        let classified = AsyncHTTPTransport.classify(IOError(errnoCode: ENFILE, reason: "socket"), url: "http://example.test/",
                                                     host: "example.test", expectedLength: nil, received: 0, timeout: .seconds(15))
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
        let classified = AsyncHTTPTransport.classify(error, url: "http://example.test/", host: "example.test",
                                                     expectedLength: nil, received: 0, timeout: .seconds(15))
        // Then it is a transport failure that says the upstream reset the connection, without NIO's call
        guard case .transport(_, let message) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(message == "the upstream reset the connection (ECONNRESET) before its answer was complete")
    }

    @Test("A reset after part of a body with a known length is a truncated answer, with the bytes received")
    func resetMidBody() {
        let classified = AsyncHTTPTransport.classify(IOError(errnoCode: ECONNRESET, reason: "read(descriptor:pointer:size:)"),
                                                     url: "http://example.test/", host: "example.test", expectedLength: 100,
                                                     received: 7, timeout: .seconds(15))
        guard case .truncatedBody(_, let expected, let received) = classified else {
            Issue.record("classified as \(classified)")
            return
        }
        #expect(expected == 100 && received == 7)
    }
}
