import KioskDebugger
import Testing

@Suite("Debugger events")
struct DebugEventsTests {
    /// The next `count` deliveries of `stream`.
    static func take(_ count: Int, from stream: AsyncStream<DebugEvents.Delivery>) async -> [DebugEvents.Delivery] {
        var taken: [DebugEvents.Delivery] = []
        for await delivery in stream {
            taken.append(delivery)
            if taken.count == count { break }
        }
        return taken
    }

    static func changes(_ deliveries: [DebugEvents.Delivery]) -> [DebugEvents.Change?] {
        deliveries.map { delivery in
            if case .event(let event) = delivery { return event.change }
            return nil
        }
    }

    @Test("a subscriber receives every change published after it subscribed, numbered in order")
    func live() async {
        // Given a hub and one subscriber
        let hub = DebugEvents(epoch: "e1")
        hub.publish(.stored(1...1))
        let stream = hub.subscribe(after: nil)

        // When three changes are published
        hub.publish(.stored(2...4))
        hub.publish(.paused(count: 1))
        hub.publish(.cleared)

        // Then the subscriber gets those three, not the earlier one, with ids e1-2 to e1-4
        let deliveries = await Self.take(3, from: stream)
        #expect(Self.changes(deliveries) == [.stored(2...4), .paused(count: 1), .cleared])
        #expect(deliveries.compactMap { if case .event(let event) = $0 { event.id.description } else { nil } } == ["e1-2", "e1-3", "e1-4"])
    }

    @Test("a subscriber coming back with its last event id gets what it missed, then new changes")
    func resume() async {
        // Given a hub that published five changes while the subscriber was away after e7-2
        let hub = DebugEvents(epoch: "e7")
        for id in Int64(1)...5 { hub.publish(.stored(id...id)) }

        // When it subscribes after e7-2, and one more change is published
        let stream = hub.subscribe(after: DebugEvents.EventID("e7-2"))
        hub.publish(.cleared)

        // Then it gets changes 3, 4 and 5, then the new one: no gap, no repeat
        #expect(Self.changes(await Self.take(4, from: stream)) == [.stored(3...3), .stored(4...4), .stored(5...5), .cleared])
    }

    @Test("a gap the ring no longer holds, or an id of another run, is a reset before the new changes",
          arguments: ["e1-1", "other-3", "e1-99", "e1-0"])
    func reset(lastSeen: String) async {
        // Given a hub keeping the last 3 of 6 changes
        let hub = DebugEvents(epoch: "e1", capacity: 3)
        for id in Int64(1)...6 { hub.publish(.stored(id...id)) }

        // When a subscriber comes back after an event it cannot be given what followed
        let stream = hub.subscribe(after: DebugEvents.EventID(lastSeen))
        hub.publish(.cleared)

        // Then it is told to reload, then follows
        let deliveries = await Self.take(2, from: stream)
        #expect(deliveries.first == .reset)
        #expect(Self.changes(Array(deliveries.dropFirst())) == [.cleared])
    }

    @Test("the oldest event still kept resumes without a reset")
    func oldestKept() async {
        // Given a hub keeping 3 of 6 changes (4, 5, 6)
        let hub = DebugEvents(epoch: "e1", capacity: 3)
        for id in Int64(1)...6 { hub.publish(.stored(id...id)) }

        // When a subscriber last saw change 3, just before the oldest kept
        let stream = hub.subscribe(after: DebugEvents.EventID("e1-3"))

        // Then it gets 4, 5 and 6 and no reset
        #expect(Self.changes(await Self.take(3, from: stream)) == [.stored(4...4), .stored(5...5), .stored(6...6)])
    }

    @Test("a subscriber that stops reading is cut off at its backlog, and others go on")
    func slowSubscriber() async {
        // Given a hub whose subscribers may fall 4 deliveries behind, one subscriber never reading
        let hub = DebugEvents(epoch: "e1", capacity: 2, backlog: 4)
        let stuck = hub.subscribe(after: nil)
        #expect(hub.subscriberCount == 1)

        // When more changes are published than its backlog and the ring hold
        for id in Int64(1)...20 { hub.publish(.stored(id...id)) }

        // Then its stream ends after what it could hold (it will reconnect and be reset), and it is gone
        var received = 0
        for await _ in stuck { received += 1 }
        #expect(received == 6)
        #expect(hub.subscriberCount == 0)
    }

    @Test("finishAll ends every stream, and a dropped stream unsubscribes")
    func finishing() async {
        // Given two subscribers
        let hub = DebugEvents(epoch: "e1")
        let first = hub.subscribe(after: nil)
        var second: AsyncStream<DebugEvents.Delivery>? = hub.subscribe(after: nil)
        #expect(hub.subscriberCount == 2)

        // When the second is dropped, then everything is finished
        second = nil
        #expect(second == nil)
        #expect(hub.subscriberCount == 1)
        hub.finishAll()

        // Then the first ends and nobody is subscribed
        var count = 0
        for await _ in first { count += 1 }
        #expect(count == 0)
        #expect(hub.subscriberCount == 0)
    }

    @Test("event ids read back from their text; other text is not an id", arguments: [
        ("k3x-12", "k3x", UInt64(12)), ("a-b-7", "a-b", UInt64(7)),
    ])
    func ids(text: String, epoch: String, sequence: UInt64) {
        #expect(DebugEvents.EventID(text) == DebugEvents.EventID(epoch: epoch, sequence: sequence))
        #expect(DebugEvents.EventID(text)?.description == text)
    }

    @Test("text that is not an event id is refused", arguments: ["", "12", "-12", "abc-", "abc-x", "abc-1.5"])
    func notIDs(text: String) {
        #expect(DebugEvents.EventID(text) == nil)
    }
}
