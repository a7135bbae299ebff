public import Foundation
public import KioskCore

// Rewrite rules made from what the console shows: a logged exchange, a breakpoint edit.
extension Debugger {
    /// A rule to start from, for a logged exchange: its endpoint and method, its status as the status to
    /// answer with, no patch yet; not added (the console shows it in the rule form to be finished).
    public func ruleDraft(from record: RequestRecord) -> RewriteRule {
        // An app's exchange through `kiosk proxy` is matched by its URL, query and all (as a mock made from it is: a rule
        // made without its query matched every request but the one it was made from): the endpoint it is logged under is
        // its host, which no rule's endpoint menu names.
        guard endpoints.contains(where: { $0.name == record.endpoint }) else {
            var components = URLComponents(string: record.url)
            components?.fragment = nil
            return RewriteRule(match: RewriteRule.Match(urlPattern: components?.string ?? record.url, method: record.method),
                               actions: RewriteRule.Actions(status: record.status), origin: "from request #\(record.id)")
        }
        return RewriteRule(match: RewriteRule.Match(endpoint: record.endpoint, method: record.method),
                           actions: RewriteRule.Actions(status: record.status), origin: "from request #\(record.id)")
    }

    /// "Keep returning this": adds a rule that answers the paused exchange's request (its endpoint, method and URL, secrets
    /// ignored) with `status` and `body` from now on, named `name` (in the language of the page it was made on; English by
    /// default). At a response, a rewrite rule whose JSON Patch replaces the whole body of the upstream's answer; at an
    /// error, where there is no answer to rewrite, a mock rule that answers without asking the upstream (a rewrite rule
    /// would never act: the upstream fails again), with the `headers` typed for the answer (its framing the transport's),
    /// else a JSON Content-Type. Throws `OrderedJSON.ParseError` when the body is not JSON (a rule's patch carries JSON
    /// only), `RuleProblem` when the rewrite rule cannot be kept (a body past a patch's size), `KioskError.invalidRequest`
    /// when the mock rule cannot (a field that is not one).
    @discardableResult
    public func keepReturning(_ exchange: PausedExchange, status: Int, body: Data, headers: [(name: String, value: String)]? = nil,
                              name: String? = nil) throws -> KeptEdit {
        let document = try OrderedJSON.parse(body)
        if exchange.phase == .error {
            let typed = (headers ?? [("Content-Type", "application/json")]).filter {
                !["content-length", "transfer-encoding"].contains($0.name.lowercased())
            }
            let mock = MockRule(method: exchange.method, urlPattern: exchange.url, status: status,
                                headers: typed.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }, body: body,
                                origin: "from a breakpoint edit of paused #\(exchange.id)")
            guard let added = try mocks.add([mock]).first else { throw KioskError.invalidRequest("The mock rule was not kept.") }
            return .mock(added)
        }
        let patch = OrderedJSON.array([.object([(key: "op", value: .string("replace")), (key: "path", value: .string("")),
                                                (key: "value", value: document)])])
        let rule = RewriteRule(
            name: name ?? "Keep returning the edit of \(exchange.endpoint)",
            // An app's exchange through `kiosk proxy` is logged under its host, no endpoint of Kiosk's: its URL alone says it.
            match: RewriteRule.Match(endpoint: endpoints.contains { $0.name == exchange.endpoint } ? exchange.endpoint : nil,
                                     urlPattern: exchange.url, method: exchange.method),
            actions: RewriteRule.Actions(status: status, patch: patch.rendered()),
            origin: "from a breakpoint edit of paused #\(exchange.id)")
        // Thrown as what it is, for the console to say in its page's language (a patch past its size, most likely).
        if let problem = rules.problem(of: rule) { throw problem }
        return .rewrite(try rules.add(rule))
    }
}

/// What "Keep returning this" made: a rewrite rule (an answer's edit) or a mock rule (an error's answer).
public enum KeptEdit: Sendable, Hashable {
    /// The rewrite rule that edits the upstream's answer from now on.
    case rewrite(RewriteRule)
    /// The mock rule that answers in place of the failing upstream from now on.
    case mock(MockRule)
}
