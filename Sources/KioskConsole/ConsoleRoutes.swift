import Hummingbird
import KioskWeb

/// Every address of the network debugger's console, in one place: `DebugController` registers its routes from
/// `ConsoleRoute.Kind`, and pages, forms and redirects build every link with `ConsoleRoute.path`, so that no other
/// file spells a console address (a test reads the sources to keep it so).
enum ConsoleRoute: Sendable, Hashable {
    // Pages
    /// The request log; its filter is `DebugFilterQuery`'s query.
    case requests
    case request(Int64)
    /// The edit-and-resend form of a logged request (its `GET`), and what it posts to.
    case compose(Int64)
    /// The JSON change of two logged answers (`a`, `b`), or the form that picks them.
    case diff
    case insights
    case endpoints
    case paused
    case pausedExchange(Int)
    case mocks
    /// One mock rule's answer, to read and edit (its `GET`), and what the form posts to.
    case mock(Int)
    case rules
    /// The rule form, empty or (`?request=`) filled in from a logged request.
    case newRule
    case rule(Int)
    /// `kiosk proxy` in this process: its listeners, live counts and how to trust its CA.
    case proxy
    /// Kiosk's proxy CA certificate as `ca.pem` or `ca.crt` (DER).
    case proxyCertificate(String)
    /// Switches the proxy cache (`mode=fallback|http|off`, `offline=on|off`), clears it (`clear=` a host, or empty for
    /// all) or removes one answer (`remove=` its id).
    case proxyCache
    /// One answer the proxy cache holds: its fields and body.
    case proxyCacheEntry(Int64)
    /// The live feed (Server-Sent Events).
    case events
    /// The log as a HAR archive.
    case har
    // Writes
    case login
    /// Sends a logged request again as it was.
    case replay(Int64)
    /// Makes a mock rule that answers with a logged response.
    case mockFrom(Int64)
    case breakpoint(endpoint: String)
    case mockAction(Int, MockAction)
    case ruleAction(Int, RuleAction)
    /// Empties the request log.
    case clear
    /// Pauses or resumes recording (`record=on|off`).
    case recording
    // JSON
    case apiRequests
    case apiRequest(Int64)
    case apiResend(Int64)
    case apiInsights
    case apiEndpoints
    case apiPaused
    /// The exchanges in flight (begun, not yet ended), through the list's filter.
    case apiInFlight
    case apiRules
    case apiRule(Int)
    case apiProxy
    /// The proxy cache: what it holds and how it answers (GET); a switch of its mode or offline state (PUT).
    case apiProxyCache

    /// What a mock rule's buttons do.
    enum MockAction: String, CaseIterable, Sendable {
        case enable, disable, delete
    }

    /// What a rewrite rule's buttons do.
    enum RuleAction: String, CaseIterable, Sendable {
        case enable, disable, delete
        case resetHits = "reset-hits"
    }

    /// Where the console lives: every address below starts with it, and the client table lists it as never
    /// answered from a device's saved pages.
    static let prefix = "/debug"
    /// Where the console's JSON API lives: its errors are JSON too.
    static let apiPrefix = prefix + "/api/"

    /// The address: the path, its segments percent-encoded.
    var path: String {
        let base = Self.prefix
        return switch self {
        case .requests: base
        case .request(let id): base + "/requests/\(id)"
        case .compose(let id): base + "/requests/\(id)/compose"
        case .diff: base + "/diff"
        case .insights: base + "/insights"
        case .endpoints: base + "/endpoints"
        case .paused: base + "/paused"
        case .pausedExchange(let id): base + "/paused/\(id)"
        case .mocks: base + "/mocks"
        case .mock(let id): base + "/mocks/\(id)"
        case .rules: base + "/rules"
        case .newRule: base + "/rules/new"
        case .rule(let id): base + "/rules/\(id)"
        case .proxy: base + "/proxy"
        case .proxyCertificate(let file): base + "/proxy/" + QueryString.encode(file)
        case .proxyCache: base + "/proxy/cache"
        case .proxyCacheEntry(let id): base + "/proxy/cache/\(id)"
        case .events: base + "/events"
        case .har: base + "/har"
        case .login: base + "/login"
        case .replay(let id): base + "/requests/\(id)/replay"
        case .mockFrom(let id): base + "/requests/\(id)/mock"
        case .breakpoint(let endpoint): base + "/breakpoints/" + QueryString.encode(endpoint)
        case .mockAction(let id, let action): base + "/mocks/\(id)/" + action.rawValue
        case .ruleAction(let id, let action): base + "/rules/\(id)/" + action.rawValue
        case .clear: base + "/clear"
        case .recording: base + "/recording"
        case .apiRequests: base + "/api/requests"
        case .apiRequest(let id): base + "/api/requests/\(id)"
        case .apiResend(let id): base + "/api/requests/\(id)/resend"
        case .apiInsights: base + "/api/insights"
        case .apiEndpoints: base + "/api/endpoints"
        case .apiPaused: base + "/api/paused"
        case .apiInFlight: base + "/api/in-flight"
        case .apiRules: base + "/api/rules"
        case .apiRule(let id): base + "/api/rules/\(id)"
        case .apiProxy: base + "/api/proxy"
        case .apiProxyCache: base + "/api/proxy/cache"
        }
    }

    /// The address with `query` (nothing added when it is empty).
    func path(_ query: QueryString) -> String { path + query.encoded }

    /// The address of the element `anchor` on the page (`#anchor`, percent-encoded).
    func path(anchor: String) -> String { path + "#" + QueryString.encode(anchor) }

    /// The kinds of address, each with the method and pattern the router registers it under.
    enum Kind: String, CaseIterable, Sendable {
        case requests, request, composeForm, compose, diff, insights, endpoints, paused, pausedExchange, decide
        case mocks, mock, saveMock, rules, newRule, rule, saveNewRule, saveRule, events, har, proxy, proxyCertificate, proxyCache, proxyCacheEntry
        case loginForm, login, replay, mockFrom, breakpoint, mockAction, ruleAction, clear, recording
        case apiRequests, apiRequest, apiResend, apiInsights, apiEndpoints, apiPaused, apiInFlight
        case apiRules, apiRule, apiAddRule, apiReplaceRule, apiDeleteRule, apiProxy, apiProxyCache, apiSwitchProxyCache

        /// The method the route answers.
        var method: HTTPRequest.Method {
            switch self {
            case .compose, .decide, .saveMock, .saveNewRule, .saveRule, .login, .replay, .mockFrom, .breakpoint, .mockAction, .ruleAction,
                 .clear, .recording, .apiResend, .apiAddRule, .proxyCache:
                .post
            case .apiReplaceRule, .apiSwitchProxyCache: .put
            case .apiDeleteRule: .delete
            default: .get
            }
        }

        /// The router's pattern.
        var pattern: RouterPath {
            switch self {
            case .requests: "/debug"
            case .request: "/debug/requests/{id}"
            case .composeForm, .compose: "/debug/requests/{id}/compose"
            case .diff: "/debug/diff"
            case .insights: "/debug/insights"
            case .endpoints: "/debug/endpoints"
            case .paused: "/debug/paused"
            case .pausedExchange, .decide: "/debug/paused/{id}"
            case .mocks: "/debug/mocks"
            case .mock, .saveMock: "/debug/mocks/{id}"
            case .rules, .saveNewRule: "/debug/rules"
            case .newRule: "/debug/rules/new"
            case .rule, .saveRule: "/debug/rules/{id}"
            case .proxy: "/debug/proxy"
            case .proxyCertificate: "/debug/proxy/{file}"
            case .events: "/debug/events"
            case .har: "/debug/har"
            case .loginForm, .login: "/debug/login"
            case .replay: "/debug/requests/{id}/replay"
            case .mockFrom: "/debug/requests/{id}/mock"
            case .breakpoint: "/debug/breakpoints/{endpoint}"
            case .mockAction: "/debug/mocks/{id}/{action}"
            case .ruleAction: "/debug/rules/{id}/{action}"
            case .clear: "/debug/clear"
            case .recording: "/debug/recording"
            case .apiRequests: "/debug/api/requests"
            case .apiRequest: "/debug/api/requests/{id}"
            case .apiResend: "/debug/api/requests/{id}/resend"
            case .apiInsights: "/debug/api/insights"
            case .apiEndpoints: "/debug/api/endpoints"
            case .apiPaused: "/debug/api/paused"
            case .apiInFlight: "/debug/api/in-flight"
            case .apiRules, .apiAddRule: "/debug/api/rules"
            case .apiRule, .apiReplaceRule, .apiDeleteRule: "/debug/api/rules/{id}"
            case .apiProxy: "/debug/api/proxy"
            case .proxyCache: "/debug/proxy/cache"
            case .proxyCacheEntry: "/debug/proxy/cache/{id}"
            case .apiProxyCache, .apiSwitchProxyCache: "/debug/api/proxy/cache"
            }
        }
    }
}

extension RouterMethods where Context == WebRequestContext {
    /// Registers `handler` for the console route `kind`, under its method and pattern.
    @discardableResult
    func on(_ kind: ConsoleRoute.Kind,
            use handler: @Sendable @escaping (Request, WebRequestContext) async throws -> some ResponseGenerator) -> Self {
        on(kind.pattern, method: kind.method, use: handler)
    }
}
