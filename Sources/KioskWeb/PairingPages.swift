import Foundation
import Hummingbird
import KioskApp
import KioskCore

/// `/pair`: the page where a browser on another machine enters `serve --lan`'s code, and its form. A right
/// code makes the browser a paired device (a long-lived cookie) and goes on to where it was going.
struct PairingController: Sendable {
    /// The page's address.
    static let path = Route.pair.path

    let gate: PairingGate

    func register(on router: Router<WebRequestContext>) {
        router.get(Route.Kind.pair.pattern) { request, context in
            let query = try FormInput.decode(PairQuery.self, from: request.uri.query)
            let paired = try gate.device(request) != nil
            var response = Pages.response(PairingPages.page(next: Self.next(query.next), notice: paired ? .alreadyPaired : nil,
                                                            context: context.view))
            if gate.carriesRevokedCookie(request) { gate.forgetRevokedDevice(&response) }
            return response
        }
        router.post(Route.Kind.pair.pattern) { request, context in
            let form = try await CSRFProtection.verifiedForm(request).decode(PairForm.self)
            let next = Self.next(form.next)
            let client = gate.client(request, context)
            let strings = context.language.pairing
            switch gate.attempts.attempt(by: client) {
            case .limited(let seconds):
                var response = Pages.response(PairingPages.page(next: next, notice: .error(strings.tooMany(seconds)), context: context.view),
                                              status: .tooManyRequests)
                response.headers[.retryAfter] = String(seconds)
                return response
            case .allowed(let remaining):
                let peer = gate.peer(request, context)?.unmapped.description ?? "an unknown address"
                let refused: String
                switch try gate.devices.pair(typed: form.code ?? "", name: UserAgentSummary.summary(request.headers[.userAgent])) {
                case .paired(let pairing):
                    gate.attempts.succeeded(by: client)
                    gate.onEvent(.paired(pairing.device, peer: peer))
                    var response = WebController.seeOther(next)
                    response.setCookie(gate.cookie(pairing.token))
                    return response
                case .wrong:
                    refused = strings.wrongCode + (remaining > 0 ? " " + strings.attemptsLeft(remaining) : "")
                case .burned:
                    gate.onEvent(.burned(peer: peer))
                    refused = strings.wrongCode + " " + strings.burned
                case .noOpenCode:
                    refused = strings.noOpenCode
                }
                return Pages.response(PairingPages.page(next: next, notice: .error(refused), context: context.view), status: .forbidden)
            }
        }
    }

    /// Where to go once paired: a path on this site only (never another site: no open redirect), and never
    /// the pairing page itself.
    static func next(_ raw: String?) -> String {
        guard let path = WebController.localReturnPath(raw), path != Self.path, !path.hasPrefix(Self.path + "?") else { return Route.home.path }
        return path
    }
}

/// `GET /pair?next=`: where to go afterwards.
struct PairQuery: Decodable {
    var next: String?

    init(from decoder: any Decoder) throws {
        next = try decoder.container(keyedBy: FormKey.self).text("next")
    }
}

/// `POST /pair`: `code=` as typed, `next=`.
struct PairForm: Decodable {
    var code: String?
    var next: String?

    init(from decoder: any Decoder) throws {
        let form = try decoder.container(keyedBy: FormKey.self)
        code = try form.text("code")
        next = try form.text("next")
    }
}

/// The pairing page, in the app's chrome.
enum PairingPages {
    typealias E = HTML

    /// What the page says above its form.
    enum Notice {
        /// A refused attempt, and why.
        case error(String)
        /// The browser already has a device cookie.
        case alreadyPaired
    }

    /// What `/pair` says where Kiosk serves this machine alone: there is nothing to pair, and how a phone would read it.
    static func notNeeded(context: ViewContext) -> HTML {
        let strings = context.language.pairing
        return Pages.layout(context, title: strings.title, current: nil, view: .pair, [
            E.element("h1", [], [.text(strings.title)]),
            E.element("p", [], prose(strings.notNeeded)),
        ])
    }

    /// The form: the code (numeric keyboard, one-time-code autofill), the hidden CSRF and `next` fields. It takes
    /// the look of the search forms (class `search`, as the debugger's token form does); the script's search
    /// behaviour needs a `q` field, which it has not.
    static func page(next: String, notice: Notice?, context: ViewContext) -> HTML {
        let strings = context.language.pairing
        var content: [HTML] = [
            E.element("h1", [], [.text(strings.title)]),
            E.element("p", [], prose(strings.intro)),
        ]
        switch notice {
        case .error(let message):
            content.append(E.element("p", [.class("banner error"), .attribute("role", "alert")], prose(message)))
        case .alreadyPaired:
            content.append(E.element("p", [.class("banner")], [.text(strings.alreadyPaired)]))
        case nil:
            break
        }
        content.append(E.element("form", [.class("search pair"), .attribute("method", "post"), .attribute("action", PairingController.path)], [
            Pages.csrfField(context),
            E.void("input", [.attribute("type", "hidden"), .attribute("name", "next"), .attribute("value", next)]),
            E.element("label", [], [
                .text(strings.codeLabel),
                E.void("input", [.attribute("type", "text"), .attribute("name", "code"), .attribute("id", "code"),
                                 .attribute("inputmode", "numeric"), .attribute("autocomplete", "one-time-code"),
                                 .attribute("maxlength", "12"), .attribute("aria-describedby", "code-hint"), .flag("required")]),
            ]),
            E.element("button", [.attribute("type", "submit")], [.text(strings.submit)]),
        ]))
        content.append(E.element("p", [.attribute("id", "code-hint"), .class("hint")], [.text(strings.codeHint)]))
        content.append(E.element("p", [], [.text(strings.fingerprintHint)]))
        return Pages.layout(context, title: strings.title, current: nil, view: .pair, content)
    }

    /// The commands the pages name, set as code on one line: a phone broke "kiosk serve --" / "lan" at its hyphen.
    static let commands = ["kiosk serve --lan", "kiosk devices pair"]

    /// `text` with each of `commands` in it as a `code.command` element.
    static func prose(_ text: String) -> [HTML] {
        var parts: [HTML] = []
        var rest = Substring(text)
        while let found = commands.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
            if found.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<found.lowerBound]))) }
            parts.append(E.element("code", [.class("command")], [.text(String(rest[found]))]))
            rest = rest[found.upperBound...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        return parts
    }
}
