import Foundation
import KioskCore
import KioskStore
import Synchronization

/// What a user write answered: an HTTP status and where it redirected.
public struct WriteAnswer: Sendable, Hashable {
    public var status: Int
    public var location: String?
    /// Whether this is the recorded answer of an earlier send of the same write, which was not applied again.
    public var isReplay: Bool

    public init(status: Int, location: String?, isReplay: Bool = false) {
        self.status = status
        self.location = location
        self.isReplay = isReplay
    }
}

/// Whose idempotency keys a write's key is among.
public enum WriteScope: Sendable, Hashable {
    /// This machine's browsers (and any browser of a listener without pairing).
    case local
    /// The paired device with this id.
    case device(Int64)

    var stored: String {
        switch self {
        case .local: AppDatabase.localWriteScope
        case .device(let id): AppDatabase.deviceWriteScope(id)
        }
    }
}

extension CatalogService {
    /// Applies a user write once per idempotency key. A write sent again with the same key and the same
    /// `fingerprint` (its method, path and body) within a week gets the first answer back, not applied again;
    /// the same key on another write is refused (`invalidRequest`), and so is a second send while the first
    /// is still being applied. Only answers of writes that were applied (2xx and 3xx) are recorded: a refused
    /// write may be sent again with its key. Keys belong to `scope` (the paired device that sent the write, or
    /// this machine's browsers): the same key from another device is another key.
    public func once(key: String, scope: WriteScope, fingerprint: String, _ write: () async throws -> WriteAnswer) async throws -> WriteAnswer {
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw KioskError.invalidRequest("An idempotency key is 1 to 255 visible ASCII characters")
        }
        // Claimed before the recorded answer is looked up: a second send that found nothing recorded while the
        // first was being applied would otherwise apply it again once the first had recorded and let go.
        let inFlight = scope.stored + " " + key
        guard writesInFlight.withLock({ $0.insert(inFlight).inserted }) else {
            throw KioskError.invalidRequest("A write with this idempotency key is being applied; send it again in a moment")
        }
        defer { _ = writesInFlight.withLock { $0.remove(inFlight) } }
        if let recorded = try database.recordedWrite(forKey: key, scope: scope.stored, now: now()) {
            guard recorded.fingerprint == fingerprint else {
                throw KioskError.invalidRequest("This idempotency key was already used for another write")
            }
            return WriteAnswer(status: recorded.status, location: recorded.location, isReplay: true)
        }
        let answer = try await write()
        if (200..<400).contains(answer.status) {
            try database.record(RecordedWrite(fingerprint: fingerprint, status: answer.status, location: answer.location),
                                forKey: key, scope: scope.stored, at: now())
        }
        return answer
    }
}
