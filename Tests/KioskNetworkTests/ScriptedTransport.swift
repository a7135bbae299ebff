import Foundation
import KioskCore
import Synchronization

/// A transport that answers from a script, one step per call, and fails loudly on an unexpected call.
final class ScriptedTransport: HTTPTransport {
    enum Step: Sendable {
        case respond(Int, headers: HTTPHeaderFields = [:], body: String = "")
        case fail(KioskError)
        /// Waits until released, then responds 200 with the body.
        case gate(String)
    }

    private struct State {
        var steps: [Step]
        var requests: [HTTPRequest] = []
        var gates: [CheckedContinuation<Void, Never>] = []
        var released = false
    }

    private let state: Mutex<State>

    init(_ steps: [Step]) { state = Mutex(State(steps: steps)) }

    var requests: [HTTPRequest] { state.withLock { $0.requests } }
    var callCount: Int { state.withLock { $0.requests.count } }

    func release() {
        let gates = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.gates = [] }
            return state.gates
        }
        for gate in gates { gate.resume() }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let step = state.withLock { state -> Step? in
            state.requests.append(request)
            return state.steps.isEmpty ? nil : state.steps.removeFirst()
        }
        guard let step else {
            throw KioskError.transport(url: request.url.absoluteString, message: "unexpected request: the script is exhausted")
        }
        switch step {
        case .respond(let status, let headers, let body):
            return HTTPResponse(status: status, headers: headers, body: Data(body.utf8), url: request.url)
        case .fail(let error):
            throw error
        case .gate(let body):
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.released { return true }
                    state.gates.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            return HTTPResponse(status: 200, body: Data(body.utf8), url: request.url)
        }
    }
}

let exampleURL = URL(string: "http://127.0.0.1:9/api/character?page=1")!
func get(_ url: URL = exampleURL) -> HTTPRequest { HTTPRequest(url: url, endpoint: "test") }
