import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

// The mock rules in the console: the list, one rule's answer to read and edit, a rule made from a logged answer, and the
// rules' switches.
extension DebugController {
    func registerMocks(on debug: RouterGroup<WebRequestContext>) {
        debug.on(.mocks) { _, context in
            Pages.response(DebugPages.mocks(try kiosk.debugger.mocks.all(), context: context.view))
        }
        // One click from a logged response to a rule that answers it from now on.
        debug.on(.mockFrom) { request, context in
            _ = try await CSRFProtection.verifiedForm(request)
            let record = try record(try context.parameters.require("id"))
            guard let status = record.status, let body = record.responseBody else {
                throw WebError.consoleBadRequest { $0.nothingToMock(record.id) }
            }
            guard !body.isTruncated else {
                throw WebError.consoleBadRequest { $0.mockBodyCut(record.id) }
            }
            let mocks = kiosk.debugger.mocks
            try mocks.add([mocks.redactingRecorded(MockRule(recorded: record, status: status, body: body.data))])
            return WebController.seeOther(ConsoleRoute.mocks.path)
        }
        debug.on(.mock) { _, context in
            let rule = try existingMock(try context.parameters.require("id"))
            return Pages.response(DebugPages.mockForm(rule, MockForm(rule), error: nil, context: context.view))
        }
        debug.on(.saveMock) { request, context in
            let form = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
                .decode(MockForm.self)
            let rule = try existingMock(try context.parameters.require("id"))
            let w = context.view.words
            // Not saved, said above the fields as they were typed: nothing typed is lost.
            func refused(_ sentence: String) -> Response {
                Pages.response(DebugPages.mockForm(rule, form, error: sentence, context: context.view), status: .unprocessableContent)
            }
            guard let status = Int(form.status.trimmingCharacters(in: .whitespaces)), HTTPSyntax.finalStatuses.contains(status) else {
                return refused(w.ruleProblem(.statusOutOfRange))
            }
            let headers: [RequestRecord.HeaderField]
            switch Self.editedFields(form.headers, shown: nil, w) {
            case .success(let fields): headers = fields.map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
            case .failure(let problem): return refused(problem.sentence)
            }
            do {
                try kiosk.debugger.mocks.update(id: rule.id, status: status, headers: headers, body: form.body(replacing: rule.body),
                                                unchangedFrom: form.version)
            } catch KioskError.notFound {
                throw WebError.consoleNotFound { $0.noSuchMock(rule.id) }
            } catch let changed as MockRules.MockChanged {
                // Changed elsewhere since the form was shown (kiosk mock edit, another console): the edit comes back as
                // typed, saying so; saved again, it replaces that change knowingly.
                var form = form
                form.version = changed.current.answerVersion
                return Pages.response(DebugPages.mockForm(changed.current, form, error: w.mockChangedElsewhere, context: context.view),
                                      status: .conflict)
            }
            return WebController.seeOther(ConsoleRoute.mocks.path(anchor: "mock-\(rule.id)"))
        }
        debug.on(.mockAction) { request, context in
            _ = try await CSRFProtection.verifiedForm(request)
            guard let id = Int(try context.parameters.require("id")) else { throw WebError.consoleBadRequest { $0.badRuleID } }
            do {
                switch try context.parameters.require("action") {
                case "enable": try kiosk.debugger.mocks.setEnabled(true, id: id)
                case "disable": try kiosk.debugger.mocks.setEnabled(false, id: id)
                case "delete": try kiosk.debugger.mocks.remove(id: id)
                default: throw WebError.consoleNotFound { $0.noSuchRuleAction }
                }
            } catch KioskError.notFound {
                throw WebError.consoleNotFound { $0.noSuchMock(id) }
            }
            return WebController.seeOther(ConsoleRoute.mocks.path)
        }
    }

    /// The mock rule whose id is `raw`; a 400 for what is no id, the console's 404 for one it has not.
    private func existingMock(_ raw: String) throws -> MockRule {
        guard let id = Int(raw), id > 0 else { throw WebError.consoleBadRequest { $0.badRuleID } }
        do {
            return try kiosk.debugger.mocks.rule(id: id)
        } catch KioskError.notFound {
            throw WebError.consoleNotFound { $0.noSuchMock(id) }
        }
    }
}
