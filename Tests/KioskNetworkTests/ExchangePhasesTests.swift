import Foundation
import KioskCore
import Testing
@testable import KioskNetwork

@Suite("The phases of one exchange, from the moments the client notes")
struct ExchangePhasesTests {
    let start = ContinuousClock.now

    /// `start` plus `milliseconds`.
    func at(_ milliseconds: Int) -> ContinuousClock.Instant { start + .milliseconds(milliseconds) }

    @Test("On a connection already open, the wait before the request is written is queueing, not connecting")
    func reusedConnection() {
        // Given an exchange written at 2 ms, answered at 50 ms, finished at 60 ms, on a connection set up before it started
        let marks = ExchangeMarks(headSent: at(2), responseHead: at(50), finished: at(60))
        let setup = ConnectionSetup(opened: at(-100), established: at(-90))
        // When its phases are computed
        let timings = RequestTimings(start: start, marks: marks, setup: setup, end: at(61))
        // Then nothing is connecting, and the phases follow the marks
        #expect(timings.connect == nil)
        #expect(abs(timings.queued! - 0.002) < 1e-9)
        #expect(abs(timings.firstByte! - 0.048) < 1e-9)
        #expect(abs(timings.download! - 0.010) < 1e-9)
        #expect(abs(timings.total - 0.061) < 1e-9)
    }

    @Test("A connection opened while the request waited is connecting; the rest of the wait is queueing")
    func newConnection() {
        // Given an exchange that waited 1 ms for the pool, then 8 ms for its new connection, then 1 ms more
        let marks = ExchangeMarks(headSent: at(10), responseHead: at(30), finished: at(31))
        let setup = ConnectionSetup(opened: at(1), established: at(9))
        // When its phases are computed
        let timings = RequestTimings(start: start, marks: marks, setup: setup, end: at(31))
        // Then 8 ms are connect, 2 ms queued, and the phases add up to the total
        #expect(abs(timings.connect! - 0.008) < 1e-9)
        #expect(abs(timings.queued! - 0.002) < 1e-9)
        let sum = timings.queued! + timings.connect! + timings.firstByte! + timings.download!
        #expect(abs(sum - timings.total) < 1e-9)
    }

    @Test("Only the part of a connection's set-up after the request started counts as its connecting")
    func setupStartedBefore() {
        // Given a connection opened 5 ms before the request started (for another request) and ready at 3 ms
        let marks = ExchangeMarks(headSent: at(4), responseHead: at(20), finished: at(21))
        let setup = ConnectionSetup(opened: at(-5), established: at(3))
        // When its phases are computed
        let timings = RequestTimings(start: start, marks: marks, setup: setup, end: at(21))
        // Then 3 ms are connect and 1 ms queued
        #expect(abs(timings.connect! - 0.003) < 1e-9)
        #expect(abs(timings.queued! - 0.001) < 1e-9)
    }

    @Test("A new connection's lookup and handshake are the parts of its connect the request waited through")
    func lookupAndHandshake() {
        // Given a connection opened at 1 ms: its name looked up by 4 ms, TCP up at 6 ms, TLS done at 9 ms; the request
        // written at 10 ms
        let marks = ExchangeMarks(headSent: at(10), responseHead: at(30), finished: at(31))
        let setup = ConnectionSetup(opened: at(1), resolved: at(4), connected: at(6), established: at(9))
        // When its phases are computed
        let timings = RequestTimings(start: start, marks: marks, setup: setup, end: at(31))
        // Then connect is 8 ms, of which 3 ms the lookup and 3 ms the handshake
        #expect(abs(timings.connect! - 0.008) < 1e-9)
        #expect(abs(timings.dns! - 0.003) < 1e-9)
        #expect(abs(timings.tls! - 0.003) < 1e-9)
        // And given a request that started after the lookup (the connection was opened for another), no lookup is its own
        let late = RequestTimings(start: at(5), marks: marks, setup: setup, end: at(31))
        #expect(abs(late.connect! - 0.004) < 1e-9)
        #expect(late.dns == 0 && abs(late.tls! - 0.003) < 1e-9)
        // And a plain connection to an address has neither part
        let plain = RequestTimings(start: start, marks: marks, setup: ConnectionSetup(opened: at(1), established: at(9)), end: at(31))
        #expect(plain.connect != nil && plain.dns == nil && plain.tls == nil)
    }

    @Test("Without a connection opened for it the whole wait is queueing; a mark never reported leaves its phase unmeasured")
    func unknownConnectionAndMissingMarks() {
        // Given an exchange on a connection that was open before it
        let http2 = RequestTimings(start: start, marks: ExchangeMarks(headSent: at(12), responseHead: at(40), finished: at(41)),
                                   setup: nil, end: at(41))
        // Then its wait is all queued
        #expect(http2.connect == nil)
        #expect(abs(http2.queued! - 0.012) < 1e-9)
        // And given one whose head-written moment was never reported, the time to first byte runs from the start
        let partial = RequestTimings(start: start, marks: ExchangeMarks(responseHead: at(40)), setup: nil, end: at(45))
        #expect(partial.queued == nil && partial.connect == nil && partial.download == nil)
        #expect(abs(partial.firstByte! - 0.040) < 1e-9)
    }
}
