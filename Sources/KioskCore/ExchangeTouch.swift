import Synchronization

/// Something of the network debugger's that acted on an exchange (or matched it and could not): a mock
/// rule that answered it, a rewrite rule that changed its answer, a breakpoint where it was edited. The
/// request log keeps them with the record, so the console can say why an answer is not the upstream's.
public struct ExchangeTouch: Sendable, Hashable, Codable {
    /// What touched it.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case mock
        case rule
        case breakpoint
        /// The exchange is a logged request sent again (as it was, or edited in the composer): `id` is
        /// the original's record id.
        case resend
        /// The exchange is a CONNECT tunnel the proxy passed through unread: `detail` says the bytes each way.
        case tunnel
        /// The answer's body went on to the app as it arrived (an event stream, a body past the proxy's buffer limit):
        /// `detail` says how much and for how long; the log keeps its first bytes.
        case stream
        /// The upstream's certificate was not checked (`kiosk proxy --insecure-upstream`).
        case insecure
        /// The upstream ended an answer of no declared length by closing its TLS connection without TLS's own
        /// goodbye (close_notify): the body was taken as whole, as browsers take it, though a cut could not be told.
        case uncleanEnd = "unclean-end"
        /// The app closed its side of the connection while the exchange waited for its answer (it gave up, or — as
        /// `nc -N` does — only stopped sending): `detail` says when; the answer went to it all the same.
        case appClosed = "app-closed"
        /// The request's body did not come whole (its app stopped sending, or the rest was not valid HTTP): it was never
        /// sent, and is not sent again as it was.
        case bodyCut = "body-cut"
    }

    public var kind: Kind
    /// The mock's or rule's id, the paused exchange's, or the original request's record id.
    public var id: Int
    /// The rule's name, the mock's method and URL, or the endpoint paused.
    public var name: String
    /// Whether it acted; false when it matched but did not apply (its patch failed, say).
    public var applied: Bool
    /// What it did ("status 503; removed ETag"), or why it did not apply, in English.
    public var detail: String
    /// What `detail` says, as data, for the faces that say it in another language; nil where `detail` is all there is.
    public var phrase: Phrase?

    public init(kind: Kind, id: Int, name: String, applied: Bool = true, detail: String) {
        self.kind = kind
        self.id = id
        self.name = name
        self.applied = applied
        self.detail = detail
    }

    /// A touch whose detail is `phrase`, in English.
    public init(kind: Kind, id: Int, name: String, applied: Bool = true, phrase: Phrase) {
        self.init(kind: kind, id: id, name: name, applied: applied, detail: phrase.english)
        self.phrase = phrase
    }

    /// The same touch with its texts passed through `transform` (to scrub secrets before it is stored).
    public func mapText(_ transform: (String) -> String) -> ExchangeTouch {
        var touch = ExchangeTouch(kind: kind, id: id, name: transform(name), applied: applied, detail: transform(detail))
        touch.phrase = phrase?.mapText(transform)
        return touch
    }

    /// What a mock, a breakpoint, a resend or a rule did, as data (its English is `english`).
    public enum Phrase: Sendable, Hashable, Codable {
        /// A mock answered in place of the upstream.
        case mockAnswered(status: Int)
        /// A logged request sent again, with what was changed (none: as it was).
        case resent(changes: [ResendChange])
        /// At a breakpoint.
        case breakpoint(BreakpointOutcome)
        /// A rule matched a request that failed before any answer came.
        case ruleFoundNoAnswer
        /// The app closed its side of the connection this many milliseconds into the exchange, before the answer came
        /// (nil: before the request was sent, while it was held at a breakpoint, say).
        case appClosedFirst(milliseconds: Int?)
        /// The request's body ended after this many bytes, short of its end: the request was not sent.
        case bodyCut(received: Int)
        /// A rule changed the answer by `edits`, in order (none: it matched and had nothing to change);
        /// `validatorsDropped`: the request went without its validators, so a whole body came to patch.
        case ruleRewrote([RuleEdit], validatorsDropped: Bool)
        /// A rule failed the request with `failure`, without sending it, after this many milliseconds.
        case ruleFailed(RuleFailure, afterMilliseconds: Int)
        /// A rule matched and left the answer as it was, for this reason.
        case ruleSkipped(RuleSkip)

        /// In English: what `detail` holds.
        public var english: String {
            switch self {
            case .mockAnswered(let status): "answered with status \(status), without the upstream"
            case .resent(let changes) where changes.isEmpty: "sent again unchanged"
            case .resent(let changes): "sent again edited: " + changes.map(\.english).joined(separator: "; ")
            case .breakpoint(let outcome): outcome.english
            case .ruleFoundNoAnswer: "the request failed before an answer arrived: nothing to rewrite"
            case .appClosedFirst(let milliseconds):
                "the app closed its side of the connection "
                    + (milliseconds.map { "\($0) ms into the exchange, before the answer came" } ?? "before its request was sent")
                    + "; what came of the exchange (its answer, or the proxy's word on its failure) went to it all the same (an app that only stopped sending, as nc -N does, reads it; one that gave up, on a "
                    + "timeout or a cancelled request, does not)"
            case .bodyCut(let received):
                "its body did not come whole (\(received) byte\(received == 1 ? "" : "s") of it): the request was never sent, and "
                    + "is not sent again as it was (Edit and resend sends a body typed in full)"
            case let .ruleRewrote(edits, dropped):
                (edits.isEmpty ? "matched; nothing to change" : edits.map(\.english).joined(separator: "; "))
                    + (dropped ? "; the request's validators were dropped so a whole body came to patch" : "")
            case let .ruleFailed(failure, milliseconds):
                "failed the request (\(failure.summary)) without sending it" + (milliseconds > 0 ? " after \(milliseconds) ms" : "")
            case .ruleSkipped(let reason): reason.english
            }
        }

        func mapText(_ transform: (String) -> String) -> Phrase {
            switch self {
            case .resent(let changes): .resent(changes: changes.map { $0.mapText(transform) })
            case let .ruleRewrote(edits, dropped): .ruleRewrote(edits.map { $0.mapText(transform) }, validatorsDropped: dropped)
            case .ruleSkipped(let reason): .ruleSkipped(reason.mapText(transform))
            default: self
            }
        }
    }

    /// One change a rule made to an answer.
    public enum RuleEdit: Sendable, Hashable, Codable {
        /// The status set (`from` and `to` equal: it was already that).
        case status(from: Int, to: Int)
        /// A header field removed.
        case removed(String)
        /// Header fields set, by the names the rule gave.
        case set([String])
        /// The body patched by this many operations; `decodedFrom`: its content coding, undone to patch it.
        case patched(operations: Int, decodedFrom: String?)
        /// Latency added.
        case latency(milliseconds: Int)

        /// In English: "status 200 → 503", "removed ETag".
        public var english: String {
            switch self {
            case let .status(from, to): from == to ? "status \(to) (unchanged)" : "status \(from) → \(to)"
            case .removed(let name): "removed \(name)"
            case .set(let names): "set " + names.joined(separator: ", ")
            case let .patched(count, coding):
                "patched the body (\(count) operation\(count == 1 ? "" : "s"))" + (coding.map { ", decoded from \($0)" } ?? "")
            case .latency(let milliseconds): "+\(milliseconds) ms"
            }
        }

        func mapText(_ transform: (String) -> String) -> RuleEdit {
            switch self {
            case .removed(let name): .removed(transform(name))
            case .set(let names): .set(names.map(transform))
            default: self
            }
        }
    }

    /// Why a rule that matched left the answer as it was.
    public enum RuleSkip: Sendable, Hashable, Codable {
        /// Its status is no final one (a rules file edited by hand).
        case statusNotFinal
        /// It sets or removes this framing or hop-by-hop field (a rules file edited by hand).
        case transportField(String)
        /// Its JSON Patch cannot be read: the patch's error, in English.
        case patchInvalid(String)
        /// The answer went on to the app as it arrived: no whole body to patch.
        case streamed
        /// The body is compressed with this coding in a way Kiosk could not undo.
        case undecodable(coding: String)
        /// The answer has no body to patch.
        case noBody
        /// The body is not JSON: the parser's error, in English.
        case notJSON(String)
        /// The JSON Patch did not apply to the body: the patch's error, in English.
        case patchFailed(String)

        /// In English.
        public var english: String {
            switch self {
            case .statusNotFinal: "The status must be a number from 200 to 599 (a 1xx is no answer)."
            case .transportField(let name):
                "\(name) is the transport's: Kiosk writes the framing (Content-Length, Transfer-Encoding) for the body the app gets and "
                    + "drops hop-by-hop fields (Connection, Keep-Alive, TE, Trailer, Upgrade, Proxy-*), so a rule cannot set or remove it."
            case .patchInvalid(let error): "its JSON Patch is not valid: \(error)"
            case .streamed: "the answer is streamed to the app as it arrives: its body cannot be patched"
            case .undecodable(let coding):
                "the body is compressed (\(coding)) in a way Kiosk could not decode (corrupt, a coding it does not know, or larger "
                    + "decoded than the answers Kiosk holds whole): it cannot be patched"
            case .noBody: "the answer has no body to patch"
            case .notJSON(let reason): "the body is not JSON (\(reason))"
            case .patchFailed(let error): "its JSON Patch did not apply: \(error)"
            }
        }

        func mapText(_ transform: (String) -> String) -> RuleSkip {
            switch self {
            case .transportField(let name): .transportField(transform(name))
            case .patchInvalid(let error): .patchInvalid(transform(error))
            case .notJSON(let reason): .notJSON(transform(reason))
            case .patchFailed(let error): .patchFailed(transform(error))
            default: self
            }
        }
    }

    /// One difference between a request sent again and the logged one.
    public enum ResendChange: Sendable, Hashable, Codable {
        case method(from: String, to: String)
        case url(from: String, to: String)
        case query(from: String, to: String)
        case headerAdded(String)
        case headerRemoved(String)
        case headerChanged(String)
        case body

        /// In English: "method GET → POST", "header X-Debug added".
        public var english: String {
            switch self {
            case let .method(from, to): "method \(from) → \(to)"
            case let .url(from, to): "URL \(from) → \(to)"
            case let .query(from, to): "query \(from) → \(to)"
            case .headerAdded(let name): "header \(name) added"
            case .headerRemoved(let name): "header \(name) removed"
            case .headerChanged(let name): "header \(name) changed"
            case .body: "body changed"
            }
        }

        func mapText(_ transform: (String) -> String) -> ResendChange {
            switch self {
            case let .url(from, to): .url(from: transform(from), to: transform(to))
            case let .query(from, to): .query(from: transform(from), to: transform(to))
            default: self
            }
        }
    }

    /// What was done with an exchange at a breakpoint.
    public enum BreakpointOutcome: Sendable, Hashable, Codable {
        case requestAborted
        case requestEdited
        case answeredAtRequest
        case answeredAtError
        case errorAborted
        case responseEdited
        /// The upstream's answer, of this status, never reached the app.
        case responseAborted(status: Int)
        /// Held at the request breakpoint this many seconds (rounded), then sent as it was: its app waited through it, so
        /// the record's total and `queued` hold it (the insights leave the exchange out).
        case requestHeld(seconds: Int)
        /// The upstream's answer held at the response breakpoint this many seconds (rounded), then passed on as it was:
        /// its timings end before.
        case responseHeld(seconds: Int)
        /// Its app had closed its connection when its pause ended (by the timeout, or an abort): dropped, never answered.
        case droppedAppGone

        /// In English.
        public var english: String {
            switch self {
            case .requestAborted: "aborted at the request breakpoint: never sent"
            case .requestEdited: "the request was edited at the request breakpoint"
            case .answeredAtRequest: "answered at the request breakpoint, without sending it"
            case .answeredAtError: "answered at the error breakpoint instead of the error"
            case .errorAborted: "aborted at the error breakpoint"
            case .responseEdited: "the response was edited at the response breakpoint"
            case .responseAborted(let status): "aborted at the response breakpoint: the upstream's \(status) never reached the app"
            case .requestHeld(let seconds): "held at the request breakpoint for \(seconds) s, then sent unchanged"
            case .responseHeld(let seconds): "the answer was held at the response breakpoint for \(seconds) s, then passed on unchanged"
            case .droppedAppGone: "the app closed its connection while it was held at a breakpoint: dropped, never answered"
            }
        }
    }
}

/// The touches of one exchange, gathered on its way down the transport stack: the capture makes one per
/// exchange (each retry is its own), starting with what acted on the request above it (`HTTPRequest.touches`),
/// and hands it down with the request (`HTTPRequest.recorder`); the layers below note what they did on the
/// request they were given, and the record is made from it, even when a layer fails the exchange (a rule
/// answering with a timeout). The wire notes on it too how far the answer has come (`answerProgress`), for a debugger's
/// list of exchanges in flight to show an answer held whole as it comes, as it shows a streamed one.
public final class ExchangeTouches: Sendable {
    private let touches: Mutex<[ExchangeTouch]>
    private let progress = Mutex<AnswerProgress>(AnswerProgress())

    /// How far an answer has come from the wire: its status and type once its head came, and its body's bytes read.
    public struct AnswerProgress: Sendable, Equatable {
        public var status: Int?
        public var contentType: String?
        public var received = 0
    }

    /// A collector holding `initial` (what layers above the capture did).
    public init(_ initial: [ExchangeTouch] = []) { touches = Mutex(initial) }

    /// Everything noted so far, in order.
    public var all: [ExchangeTouch] { touches.withLock { $0 } }

    /// Adds `touch`.
    public func add(_ touch: ExchangeTouch) { touches.withLock { $0.append(touch) } }

    /// Notes that the answer's head came from the wire, with `status` and `contentType` (an answer after an earlier
    /// one on the same exchange — a revalidation's — starts its count again).
    public func answerBegan(status: Int, contentType: String?) {
        progress.withLock { $0 = AnswerProgress(status: status, contentType: contentType, received: 0) }
    }

    /// Notes `count` more bytes of the answer's body read from the wire.
    public func answerReceived(_ count: Int) { progress.withLock { $0.received += count } }

    /// How far the answer has come from the wire so far.
    public var answerProgress: AnswerProgress { progress.withLock { $0 } }
}
