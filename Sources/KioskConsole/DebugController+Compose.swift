import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

// Edit and resend: the composer's page and form, and the same in JSON.
extension DebugController {
    func registerComposer(on debug: RouterGroup<WebRequestContext>) {
        debug.on(.composeForm) { _, context in
            let logged = try self.record(try context.parameters.require("id"))
            return Pages.response(DebugPages.composer(logged, form: ComposeForm(logged), error: nil, context: context.view))
        }
        debug.on(.compose) { request, context in
            let fields = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
            let logged = try self.record(try context.parameters.require("id"))
            let form = try fields.decode(ComposeForm.self)
            do {
                let outcome = try await kiosk.debugger.resendUnlessPaused(logged, as: try form.request(context.view.words, original: ComposedRequest(logged)))
                return WebController.seeOther(Self.page(of: outcome))
            } catch let problem as FieldsProblem {
                return Pages.response(DebugPages.composer(logged, form: form, error: problem.sentence, context: context.view),
                                      status: .unprocessableContent)
            } catch let problem as ResendProblem {
                return Pages.response(DebugPages.composer(logged, form: form, error: context.view.words.resendProblem(problem), context: context.view),
                                      status: .unprocessableContent)
            }
        }
        debug.on(.apiResend) { request, context in
            let body = try await jsonBody(request)
            let logged = try self.record(try context.parameters.require("id"))
            let changes: ResendJSON
            do {
                changes = body.isEmpty ? ResendJSON() : try JSONDecoder().decode(ResendJSON.self, from: body)
            } catch {
                throw WebError.badRequest("The body is not the resend JSON: {\"method\", \"url\", \"query\": [{\"name\", \"value\"}], "
                    + "\"headers\": [{\"name\", \"value\"}], \"body\"}, every field optional.")
            }
            let resent: Resent
            do {
                resent = try await kiosk.debugger.resend(logged, as: changes.applied(to: ComposedRequest(logged)))
            } catch let problem as ResendProblem {
                throw WebError.badRequest(problem.english)
            }
            var response = try JSONResponse.ok(ResentJSON(resent))
            response.status = .created
            if let id = resent.recordID { response.headers[.location] = ConsoleRoute.apiRequest(id).path }
            return response
        }
    }
}

/// The answer of `POST /debug/api/requests/{id}/resend`.
private struct ResentJSON: Encodable {
    /// The new exchange's id in the log (null with capture off).
    var id: Int64?
    var status: Int?
    var error: String?

    init(_ resent: Resent) {
        id = resent.recordID
        status = resent.response?.status
        error = resent.error?.description
    }
}
