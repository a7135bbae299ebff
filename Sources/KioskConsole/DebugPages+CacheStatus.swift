import KioskCore
import KioskWeb

// The console's cache badge: the decision in RFC 9211's words (CacheStatus.swift), the short label on the
// badge and the whole Cache-Status value in its tooltip, so the list reads like the header on the answer.

extension DebugPages {
    /// A badge with `status`'s short label (`hit fresh`, `fwd=stale revalidated`), coloured by decision,
    /// and the full header value as its title.
    static func cacheBadge(_ status: CacheStatus) -> HTML {
        E.element("span", [.class("decision \(status.decision.rawValue)"), .attribute("title", "Cache-Status: \(status.headerValue)")],
                  [.text(status.label)])
    }

    /// The request detail's facts about the decision: its short label, then the exact header value.
    static func cacheFacts(_ status: CacheStatus, _ w: ConsoleWords) -> [(String, String)] {
        [(w.cacheDecision, status.label), ("Cache-Status", status.headerValue)]
    }
}
