import Foundation
import KioskApp
import KioskCore
import KioskProxy
import KioskTestSupport
import NIOCore
import NIOHTTP1
import Synchronization
import Testing

@Suite("kiosk proxy: the bodies held whole add up to at most the process's budget; past it they stream on")
struct HeldBodiesTests {
    @Test("The budget counts what fits, refuses what does not, says so once, and a body's bytes come back when it is freed")
    func budgetArithmetic() {
        // Given a budget of 100 bytes that reports when it is first spent
        let budget = HeldBodies(capacity: 100)
        let told = Mutex<[Int]>([])
        budget.onSpent { capacity in told.withLock { $0.append(capacity) } }
        // When 60 bytes are held, then 50 more are asked for twice
        #expect(budget.reserve(60))
        #expect(!budget.reserve(50))
        #expect(!budget.reserve(50))
        // Then only the 60 count, and the owner heard of the refusal once, with the capacity
        #expect(budget.held == 60)
        #expect(told.withLock { $0 } == [100])
        // When a body of 40 bytes holds 40 reserved bytes, and the last copy of it is dropped
        #expect(budget.reserve(40))
        var body: Data? = budget.data(count: 40, reserved: 40) { memory in memory.initializeMemory(as: UInt8.self, repeating: 7) }
        var copy = body
        #expect(body == Data(repeating: 7, count: 40) && budget.held == 100)
        body = nil
        #expect(budget.held == 100, "a copy still lives")
        copy = nil
        // Then its bytes are back
        #expect(copy == nil && budget.held == 60)
    }

    /// A proxy whose answers and uploads count against `budget`, in front of a `StreamingUpstream`, holding up to 1 MiB
    /// per body.
    static func withBudgetedProxy(_ budget: HeldBodies, limit: Int = 1 << 20,
                                  _ body: (ProxyHarness, StreamingUpstream) async throws -> Void) async throws {
        var configuration = ProxyConfiguration(port: 0, maximumRequestBodyBytes: limit)
        configuration.heldBodies = budget
        try await withProxy(configuration, to: try await StreamingUpstream.start(), stop: { await $0.stop() },
                            configure: {
                                $0.proxyTransport.maximumBodyBytes = limit
                                $0.proxyTransport.heldBodies = budget
                            }, body)
    }

    @Test("An answer the budget has no room for reaches the app whole as a stream; with room again the next is held, and its bytes come back")
    func answerPastTheBudget() async throws {
        // Given a budget of 256 KiB of which other exchanges hold 200 KiB, and an answer of 128 KiB (under the 1 MiB limit)
        let budget = HeldBodies(capacity: 256 << 10)
        try await Self.withBudgetedProxy(budget) { proxy, upstream in
            #expect(budget.reserve(200 << 10))
            let size = 128 << 10
            let first = upstream.url("/chunked?n=1&bytes=\(size)")
            // When an app fetches it
            let streamed = try await StreamingTests.read(through: proxy, first)
            // Then every byte arrived, and the log notes it passed as a stream rather than held
            #expect(streamed.ended && streamed.body == StreamingUpstream.pattern(size))
            let streamedRecord = try #require(try await StreamingTests.record(of: first, in: proxy))
            #expect(streamedRecord.touchedBy.map(\.kind) == [.stream])
            #expect(budget.held == 200 << 10, "a streamed body is not counted")
            // When the other exchanges free theirs and the app fetches again
            budget.release(200 << 10)
            let second = upstream.url("/chunked?n=2&bytes=\(size)")
            let held = try await StreamingTests.read(through: proxy, second)
            // Then it was held whole (no stream noted), and once logged and written its bytes are back
            #expect(held.ended && held.body == StreamingUpstream.pattern(size))
            let heldRecord = try #require(try await StreamingTests.record(of: second, in: proxy))
            #expect(heldRecord.touchedBy.isEmpty && heldRecord.responseBody?.data.count == size)
            try proxy.kiosk.debugger.flush()
            #expect(try await StreamingTests.eventually { budget.held == 0 }, "held: \(budget.held)")
        }
    }

    @Test("A held body larger than a write slice reaches a slow app whole with its length, counted until the app has it all")
    func largeHeldBodyToASlowApp() async throws {
        // Given a budget with room, and an answer of 15 MiB with its length declared (held whole: under the 16 MiB limit),
        // more than the loopback's socket buffers take at once
        let budget = HeldBodies(capacity: 64 << 20)
        try await Self.withBudgetedProxy(budget, limit: 16 << 20) { proxy, upstream in
            let size = 15 << 20
            let url = upstream.url("/sized?bytes=\(size)")
            var heldWhileReading: Int?
            // When an app reads it slowly, pausing after the first part it gets
            let reading = try await StreamingTests.read(through: proxy, url) { reading in
                if heldWhileReading == nil {
                    try await Task.sleep(for: .milliseconds(200))
                    heldWhileReading = budget.held
                }
                return false
            }
            // Then every byte arrived in order, with the declared length, and the exchange was not a stream
            #expect(reading.ended && reading.body == StreamingUpstream.pattern(size))
            #expect(reading.head?.headers["Content-Length"] == [String(size)])
            #expect(try #require(try await StreamingTests.record(of: url, in: proxy)).touchedBy.isEmpty)
            // And while the app had not read it all, its bytes were counted as held; afterwards they are back
            #expect(heldWhileReading.map { $0 >= size } == true, "held while reading: \(heldWhileReading ?? -1)")
            try proxy.kiosk.debugger.flush()
            #expect(try await StreamingTests.eventually { budget.held == 0 }, "held: \(budget.held)")
        }
    }

    @Test("An upload the budget has no room for goes to the upstream as the app sends it; with room it is held and sent with its length")
    func uploadPastTheBudget() async throws {
        // Given a budget of 256 KiB of which other exchanges hold 200 KiB, and a chunked upload of 128 KiB
        let budget = HeldBodies(capacity: 256 << 10)
        try await Self.withBudgetedProxy(budget) { proxy, upstream in
            #expect(budget.reserve(200 << 10))
            let size = 128 << 10
            // When an app sends it
            let streamed = try await StreamingTests.upload(through: proxy, upstream.url("/upload"), size: size, declared: false)
            // Then the upstream got every byte, chunked as the app sent it (not held and measured first)
            #expect(streamed.head?.status == .ok)
            #expect(streamed.body.contains(#""bytes":\#(size),"pattern":true,"chunked":true"#), "\(streamed.body)")
            // When the room comes back and the app sends it again
            budget.release(200 << 10)
            let held = try await StreamingTests.upload(through: proxy, upstream.url("/upload"), size: size, declared: false)
            // Then it was held whole and sent with its length, and its bytes are back afterwards
            #expect(held.body.contains(#""bytes":\#(size),"pattern":true,"chunked":false,"length":"\#(size)""#), "\(held.body)")
            try proxy.kiosk.debugger.flush()
            #expect(try await StreamingTests.eventually { budget.held == 0 }, "held: \(budget.held)")
        }
    }
}
