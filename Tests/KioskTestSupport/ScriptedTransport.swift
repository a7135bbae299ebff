import Foundation
import KioskCore
import Synchronization

/// The tests' one fake upstream: answers from a script, one step per call, records every request, and fails
/// loudly on a call the script did not expect. A step can be held until `release()`, so a test decides when
/// an answer arrives (to have requests in flight at once), and a script can end in a step that answers
/// every further call (an upstream that always says the same thing).
public final class ScriptedTransport: HTTPTransport {
    public indirect enum Step: Sendable {
        /// Answers with this status, headers and body.
        case respond(Int, headers: HTTPHeaderFields = [:], body: String = "")
        /// Throws this error, as a transport does when the exchange fails.
        case fail(KioskError)
        /// Answers with whatever the closure makes of the request.
        case reply(@Sendable (HTTPRequest) throws -> HTTPResponse)
        /// Waits until `release()` is called (at once if it already was), then does `step`.
        case held(Step)
        /// Never answers: waits until the calling task is cancelled, then fails as a cancelled exchange does.
        case untilCancelled

        /// Waits until released, then answers 200 with `body`.
        public static func gate(_ body: String) -> Step { .held(.respond(200, body: body)) }

        /// Answers `status` with a JSON body and its Content-Type.
        public static func json(_ body: String, status: Int = 200) -> Step {
            .respond(status, headers: ["Content-Type": "application/json"], body: body)
        }

        /// Answers 200 with the request's path as its body, so each caller can tell its own answer.
        public static var echoPath: Step {
            .reply { request in HTTPResponse(status: 200, body: Data(request.url.path.utf8), url: request.url) }
        }
    }

    private struct State {
        var steps: [Step]
        var requests: [HTTPRequest] = []
        var gates: [CheckedContinuation<Void, Never>] = []
        var released = false
    }

    private let state: Mutex<State>
    private let otherwise: Step?

    /// Answers the calls with `steps` in order; once they are used up, with `otherwise`, or, without it,
    /// by failing the call as unexpected.
    public init(_ steps: [Step], otherwise: Step? = nil) {
        state = Mutex(State(steps: steps))
        self.otherwise = otherwise
    }

    /// Answers every call with `step`.
    public convenience init(always step: Step) { self.init([], otherwise: step) }

    /// Every request received so far, in order.
    public var requests: [HTTPRequest] { state.withLock { $0.requests } }
    public var callCount: Int { state.withLock { $0.requests.count } }

    /// Lets every held step go on, now and from now on.
    public func release() {
        let gates = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.gates = [] }
            return state.gates
        }
        for gate in gates { gate.resume() }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let step = state.withLock { state -> Step? in
            state.requests.append(request)
            return state.steps.isEmpty ? otherwise : state.steps.removeFirst()
        }
        guard let step else {
            throw KioskError.transport(url: request.url.absoluteString, message: "unexpected request: the script is exhausted")
        }
        return try await perform(step, for: request)
    }

    private func perform(_ step: Step, for request: HTTPRequest) async throws -> HTTPResponse {
        switch step {
        case .respond(let status, let headers, let body):
            return HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: request.url)
        case .fail(let error):
            throw error
        case .reply(let answer):
            return try answer(request)
        case .held(let next):
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.released { return true }
                    state.gates.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return try await perform(next, for: request)
        case .untilCancelled:
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            throw KioskError.cancelled
        }
    }
}
