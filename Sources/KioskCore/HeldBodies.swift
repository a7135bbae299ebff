public import Foundation
import Synchronization

/// How many bytes of bodies a proxy holds whole in memory at once, across all its exchanges. A body under the buffer
/// limit is held whole (so the cache can store it, a breakpoint edit it, the log keep it); many of them at once —
/// sixty-four apps fetching 15 MB each, or an upstream answering every request with a large body — would add up
/// without bound. Past this budget an answer is not held but streamed to its app as it arrives, as one past the
/// buffer limit already is, until held bodies are freed: nginx's `proxy_buffering` degrades the same way to its
/// temporary files. A held body's bytes count from its first byte received to the moment the last copy of it that
/// Kiosk keeps (the answer's body, the log's record, the cache's queue, the app's write) is freed.
public final class HeldBodies: Sendable, Hashable {
    /// The most bytes held at once.
    public let capacity: Int
    private let state = Mutex(State())

    private struct State {
        var held = 0
        var saidSpent = false
        var onSpent: (@Sendable (Int) -> Void)?
    }

    /// A budget of `capacity` bytes.
    public init(capacity: Int) {
        self.capacity = max(capacity, 0)
    }

    /// The bytes held now.
    public var held: Int { state.withLock { $0.held } }

    /// Sets what hears the capacity the first time a body is not held for want of room (`kiosk proxy` says it once on
    /// stderr).
    public func onSpent(_ tell: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.onSpent = tell }
    }

    /// Counts `bytes` more as held, if they fit; false (and nothing counted) when they do not.
    public func reserve(_ bytes: Int) -> Bool {
        let (fits, tell) = state.withLock { state -> (Bool, (@Sendable (Int) -> Void)?) in
            if state.held + bytes <= capacity {
                state.held += bytes
                return (true, nil)
            }
            defer { state.saidSpent = true }
            return (false, state.saidSpent ? nil : state.onSpent)
        }
        tell?(capacity)
        return fits
    }

    /// Gives back `bytes` counted by `reserve`.
    public func release(_ bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { $0.held = max(0, $0.held - bytes) }
    }

    /// A `Data` of `count` bytes written by `fill`, that gives back `reserved` bytes (counted by `reserve`) when its
    /// storage is freed: the reservation lasts as long as any copy of the body does.
    public func data(count: Int, reserved: Int, fill: (UnsafeMutableRawBufferPointer) -> Void) -> Data {
        guard count > 0 else {
            release(reserved)
            return Data()
        }
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        fill(memory)
        return Data(bytesNoCopy: memory.baseAddress!, count: count, deallocator: .custom { [self] pointer, _ in
            pointer.deallocate()
            release(reserved)
        })
    }

    /// A body's `parts` (`count` bytes in all, each read through `bytes`) joined in one `Data`, one copy; with a budget,
    /// the `Data` carries the `reserved` bytes counted for them for as long as it lives (see `data(count:reserved:fill:)`).
    public static func joined<Parts: Collection>(_ parts: Parts, count: Int, budget: HeldBodies?, reserved: Int,
                                                 bytes: (Parts.Element, (UnsafeRawBufferPointer) -> Void) -> Void) -> Data {
        let fill = { (memory: UnsafeMutableRawBufferPointer) in
            var offset = 0
            for part in parts {
                bytes(part) { source in
                    guard let base = source.baseAddress, source.count > 0 else { return }
                    memory.baseAddress!.advanced(by: offset).copyMemory(from: base, byteCount: min(source.count, count - offset))
                    offset += source.count
                }
            }
        }
        if let budget { return budget.data(count: count, reserved: reserved, fill: fill) }
        var body = Data(count: count)
        if count > 0 { body.withUnsafeMutableBytes(fill) }
        return body
    }

    public static func == (lhs: HeldBodies, rhs: HeldBodies) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
