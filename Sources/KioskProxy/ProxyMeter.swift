public import KioskCore
import Synchronization

/// The live counts of a process's proxy listeners (every listener of one `kiosk proxy` shares one meter).
public final class ProxyMeter: Sendable {
    private let counts = Mutex(ProxyOverview.Counts())

    public init() {}

    /// The counts now.
    public var snapshot: ProxyOverview.Counts { counts.withLock { $0 } }

    func count(_ change: (inout ProxyOverview.Counts) -> Void) { counts.withLock { change(&$0) } }
}
