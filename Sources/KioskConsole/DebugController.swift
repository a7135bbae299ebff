import Crypto
import Foundation
import Hummingbird
import KioskApp
import KioskCore
import KioskDebugger
import KioskWeb

/// The network debugger's console under `/debug` and its JSON under `/debug/api`: the request log with
/// filters and search, and each request in full. Served only to loopback listeners unless a token is
/// configured (see `DebugAccess`).
struct DebugController: Sendable {
    let kiosk: Kiosk
    let access: DebugAccess

    /// The console's routes form one group under `/debug`, behind `DebugAccessMiddleware`; only the token
    /// form's target, `/debug/login`, is outside it (it is how a locked browser gets in).
    func register(on router: Router<WebRequestContext>) {
        router.on(.login) { request, context in try await access.login(request, context: context) }
        // The form's address opened or bookmarked: the console, which asks for the token when it is locked.
        router.on(.loginForm) { _, _ in WebController.seeOther(ConsoleRoute.requests.path) }
        let debug = router.group().add(middleware: DebugAccessMiddleware(access: access))
        debug.on(.requests) { request, context in
            let query = try FormInput.decode(DebugFilterQuery.self, from: request.uri.query)
            // A form sent without its script names its empty fields too: the address keeps only what filters.
            if let raw = request.uri.query, raw.split(separator: "&").contains(where: { $0.hasSuffix("=") || !$0.contains("=") }) {
                return WebController.seeOther(ConsoleRoute.requests.path(query.queryString))
            }
            // Read before the records: the feed replays from here, so nothing stored meanwhile is missed
            // (a row both listed and replayed is shown once).
            let eventID = kiosk.debugger.events.latestID
            // A filter that does not parse is shown with its mistake marked, in place of the list.
            let records = query.syntaxError == nil ? try withLog().records(matching: query.filter) : []
            let (count, newest) = try withLog().countAndNewestID()
            return Pages.response(DebugPages.requests(records, query: query, count: count, newestCounted: newest,
                                                      paused: kiosk.debugger.breakpoints.paused.count,
                                                      proxyOffline: kiosk.proxyCacheSettings?.offline == true, eventID: eventID,
                                                      isRecording: kiosk.debugger.isRecording, unlogged: kiosk.debugger.unloggedCount,
                                                      live: query.before == nil && query.syntaxError == nil,
                                                      hosts: (try? kiosk.debugger.proxiedHosts()) ?? [],
                                                      catalogs: kiosk.proxyOverview() == nil || ((try? kiosk.debugger.holdsCatalogTraffic()) ?? true),
                                                      inFlight: query.syntaxError == nil ? kiosk.debugger.inFlight(matching: query.filter) : [],
                                                      pausedRows: query.syntaxError == nil ? kiosk.debugger.pausedInFlight(matching: query.filter) : [],
                                                      context: context.view),
                                  status: query.syntaxError == nil ? .ok : .badRequest)
        }
        debug.on(.events) { request, context in
            try liveEvents(request, words: context.view.words, stillAuthorized: context.stillAuthorized, recheck: access.recheckInterval)
        }
        debug.on(.diff) { request, context in
            // Asked with nothing to compare (a bookmark, the address typed): the form that picks the two.
            if (request.uri.query ?? "").isEmpty { return Pages.response(DebugPages.diffForm(context: context.view)) }
            return Pages.response(DebugPages.diff(try diff(request), context: context.view))
        }
        debug.on(.insights) { _, context in Pages.response(DebugPages.insights(try withLog().insights(), context: context.view)) }
        debug.on(.apiInsights) { _, _ in try JSONResponse.ok(try withLog().insights()) }
        debug.on(.request) { _, context in
            let record = try record(try context.parameters.require("id"))
            let breakpoint = kiosk.debugger.breakpointKey(for: record).map { (key: $0, setting: kiosk.debugger.breakpoints.setting(for: $0)) }
            return Pages.response(DebugPages.request(record, previous: try withLog().previousAnswer(to: record), breakpoint: breakpoint,
                                                     replayRefusal: kiosk.debugger.replayRefusal(record),
                                                     connectOverrides: kiosk.connectOverrides, context: context.view))
        }
        debug.on(.apiRequests) { request, _ in
            let query = try FormInput.decode(DebugFilterQuery.self, from: request.uri.query)
            if let refusal = FilterErrorJSON(query) { return try JSONResponse.badRequest(refusal) }
            return try JSONResponse.ok(try withLog().records(matching: query.filter).map { RequestJSON($0) })
        }
        debug.on(.apiRequest) { _, context in
            try JSONResponse.ok(RequestJSON(try record(try context.parameters.require("id"))))
        }
        debug.on(.har) { request, context in
            let query = try FormInput.decode(DebugFilterQuery.self, from: request.uri.query)
            // A filter that does not parse is shown where it is made: the list, which marks the mistake under it and
            // keeps the console's links (an error page here said only a position, and led back to the catalogs).
            if query.syntaxError != nil {
                return WebController.seeOther(ConsoleRoute.requests.path + (request.uri.query.map { "?" + $0 } ?? ""))
            }
            // The whole log (or all that match) unless a limit is asked for, sent as it is read: a batch of records in
            // memory at a time, however large the log.
            let debugger = try withLog()
            let filter = query.filter, maximum = query.limit ?? 100_000
            let name = "kiosk-\(Int(kiosk.now().timeIntervalSince1970)).har"
            return Response(status: .ok, headers: [.contentType: "application/json; charset=utf-8",
                                                   .contentDisposition: "attachment; filename=\"\(name)\""],
                            body: ResponseBody { writer in
                                let archive = try debugger.harArchive(matching: filter, maximum: maximum)
                                while let part = try archive.next() { try await writer.write(ByteBuffer(bytes: part)) }
                                try await writer.finish(nil)
                            })
        }
        debug.on(.endpoints) { _, context in
            // With capture off there is no log, so no host seen: the catalogs' endpoints alone.
            Pages.response(DebugPages.endpoints(kiosk.debugger.endpoints, hosts: (try? kiosk.debugger.proxiedEndpoints()) ?? [],
                                                settings: try kiosk.debugger.breakpoints.settings(), context: context.view))
        }
        debug.on(.apiEndpoints) { _, _ in try JSONResponse.ok(kiosk.debugger.endpoints) }
        debug.on(.proxy) { _, context in
            // Each host with its most recently used answers (20), to open one.
            let cache = kiosk.proxyCacheSettings.map { settings in
                let hosts = ((try? kiosk.proxyCacheStats()) ?? []).map { host in
                    (host, (try? kiosk.proxyCacheEntries(host: host.key, limit: 20)) ?? [])
                }
                return (settings, hosts, failure: kiosk.proxyCacheFailure)
            }
            return Pages.response(DebugPages.proxy(kiosk.proxyOverview(), cache: cache, now: kiosk.now(), context: context.view))
        }
        debug.on(.proxyCache) { request, _ in
            let form = try await CSRFProtection.verifiedForm(request).decode(ProxyCacheForm.self)
            guard kiosk.proxyCacheSettings != nil else { throw Self.noProxyCache }
            switch form.change {
            case .mode(let mode):
                do { try kiosk.switchProxyCache(mode: mode) } catch KioskError.invalidRequest { throw WebError.consoleBadRequest { $0.proxyOffNeedsOnline } }
            case .offline(let offline):
                do { try kiosk.switchProxyCache(offline: offline) } catch KioskError.invalidRequest {
                    throw WebError.consoleBadRequest { $0.proxyOfflineNeedsCache }
                }
            case .clear(let host): try kiosk.clearProxyCache(host: host)
            case .remove(let id):
                guard try kiosk.removeProxyCacheEntry(id: id) else { throw WebError.consoleNotFound { $0.noStoredAnswer(id) } }
            }
            // Where `DebugPages.inPlace` says the script goes.
            return WebController.seeOther(ConsoleRoute.proxy.path(anchor: "proxy-cache"))
        }
        debug.on(.proxyCacheEntry) { _, context in
            guard let raw = context.parameters.get("id"), let id = Int64(raw), id > 0 else {
                throw WebError.consoleNotFound { $0.badStoredAnswerID }
            }
            guard kiosk.proxyCacheSettings != nil else { throw Self.noProxyCache }
            guard let entry = try kiosk.redactedProxyCacheEntry(id: id) else {
                throw WebError.consoleNotFound { $0.noStoredAnswer(id) }
            }
            return Pages.response(DebugPages.proxyCacheEntry(entry, now: kiosk.now(), context: context.view))
        }
        debug.on(.apiProxyCache) { _, _ in
            guard let settings = kiosk.proxyCacheSettings else { throw Self.noProxyCache }
            return try JSONResponse.ok(ProxyCacheJSON(mode: settings.mode, offline: settings.offline, hosts: try kiosk.proxyCacheStats()))
        }
        debug.on(.apiSwitchProxyCache) { request, _ in
            let change: ProxyCacheSwitch
            do {
                change = try JSONDecoder().decode(ProxyCacheSwitch.self, from: try await jsonBody(request))
            } catch let error as WebError {
                throw error
            } catch {
                throw WebError.badRequest(#"Send {"mode": "fallback", "http" or "off", "offline": true or false}, either or both."#)
            }
            guard let settings = try kiosk.switchProxyCache(mode: change.mode, offline: change.offline) else { throw Self.noProxyCache }
            return try JSONResponse.ok(ProxyCacheJSON(mode: settings.mode, offline: settings.offline, hosts: try kiosk.proxyCacheStats()))
        }
        debug.on(.apiProxy) { _, _ in
            guard let overview = kiosk.proxyOverview() else {
                throw WebError.notFound("No proxy runs in this process: `kiosk proxy` starts one, with this console beside it.")
            }
            return try JSONResponse.ok(overview)
        }
        debug.on(.proxyCertificate) { _, context in
            // The CA's certificate only (what apps must trust); its key never leaves the data directory.
            guard let pem = kiosk.proxyOverview()?.certificatePEM else { throw WebError.consoleNotFound { $0.proxyHasNoCA } }
            let file = try context.parameters.require("file")
            let (body, type): ([UInt8], String)
            switch file {
            case "ca.pem": (body, type) = (Array(pem.utf8), "application/x-pem-file")
            case "ca.crt": (body, type) = (DebugPages.der(fromPEM: pem), "application/x-x509-ca-cert")
            case "ca.mobileconfig":
                guard let fingerprint = kiosk.proxyOverview()?.fingerprint else { throw WebError.consoleNotFound { $0.proxyHasNoCA } }
                (body, type) = (ProxyGuide.configurationProfile(certificateDER: Data(DebugPages.der(fromPEM: pem)), fingerprint: fingerprint),
                                "application/x-apple-aspen-config")
            default: throw WebError.consoleNotFound { $0.noSuchDownload(ConsoleRoute.proxy.path) }
            }
            let name = ["ca.pem": "kiosk-proxy-ca.pem", "ca.crt": "kiosk-proxy-ca.crt"][file] ?? "kiosk-proxy.mobileconfig"
            return Response(status: .ok, headers: [.contentType: type, .contentDisposition: "attachment; filename=\"\(name)\""],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
        debug.on(.paused) { _, context in
            Pages.response(DebugPages.paused(kiosk.debugger.breakpoints.paused, now: kiosk.now(), context: context.view))
        }
        debug.on(.apiPaused) { _, _ in try JSONResponse.ok(kiosk.debugger.breakpoints.paused) }
        debug.on(.apiInFlight) { request, _ in
            let query = try FormInput.decode(DebugFilterQuery.self, from: request.uri.query)
            if let refusal = FilterErrorJSON(query) { return try JSONResponse.badRequest(refusal) }
            // Every one in flight, however briefly: a script asks when it wants to know (the list waits a second).
            return try JSONResponse.ok(kiosk.debugger.inFlight(matching: query.filter, olderThan: .zero).map(InFlightJSON.init))
        }
        debug.on(.pausedExchange) { _, context in
            let exchange = try paused(try context.parameters.require("id"))
            return Pages.response(DebugPages.pausedExchange(exchange, error: nil, draft: nil, context: context.view))
        }
        debug.on(.decide) { request, context in
            let form = try await CSRFProtection.verifiedForm(request, maximumBytes: Self.maximumEditBytes, allowsLineBreaks: true)
            let decision = try form.decode(PauseDecisionForm.self)
            let rawID = try context.parameters.require("id")
            // Gone on meanwhile (its timeout, another tab): what was typed is given back, not lost with a bare 404.
            if let id = Int(rawID), id > 0, kiosk.debugger.breakpoints.paused(id: id) == nil {
                return Pages.response(DebugPages.pauseEnded(id, draft: decision, context: context.view), status: .conflict)
            }
            return try decide(try paused(rawID), form: decision, context: context.view)
        }
        debug.on(.breakpoint) { request, context in
            let form = try await CSRFProtection.verifiedForm(request)
            // The path segment as sent: a host's port colon arrives percent-encoded (`localhost%3A3000`).
            let raw = try context.parameters.require("endpoint")
            let endpoint = raw.removingPercentEncoding ?? raw
            guard kiosk.debugger.acceptsBreakpoints(on: endpoint) else {
                // A URL pattern with a problem of its own (a port no URL has) is told what it is, as the rules' forms tell it.
                if let problem = kiosk.debugger.breakpointPatternProblem(on: endpoint) {
                    throw WebError.consoleBadRequest { $0.ruleProblem(.urlPattern(problem)) }
                }
                // Named as kept (a key typed into a pattern's query is not shown back).
                throw WebError.consoleNotFound { [name = String(kiosk.debugger.breakpoints.keptKey(endpoint).prefix(60))] in
                    $0.noSuchEndpoint(name)
                }
            }
            try kiosk.debugger.breakpoints.set(try form.decode(BreakpointForm.self).setting, for: endpoint)
            return WebController.seeOther(ConsoleRoute.endpoints.path(anchor: kiosk.debugger.breakpoints.keptKey(endpoint)))
        }
        debug.on(.clear) { request, _ in
            _ = try await CSRFProtection.verifiedForm(request)
            try withLog().clear()
            return WebController.seeOther(ConsoleRoute.requests.path)
        }
        debug.on(.recording) { request, _ in
            let form = try await CSRFProtection.verifiedForm(request).decode(RecordingForm.self)
            _ = try withLog()
            kiosk.debugger.isRecording = form.record
            return WebController.seeOther(ConsoleRoute.requests.path)
        }
        registerRules(on: debug)
        registerMocks(on: debug)
        // Sent again as logged, in one click: the new exchange's page shows how it went.
        debug.on(.replay) { request, context in
            _ = try await CSRFProtection.verifiedForm(request)
            let outcome: ResendOutcome
            do {
                outcome = try await kiosk.debugger.resendUnlessPaused(try record(try context.parameters.require("id")))
            } catch let problem as ResendProblem {
                throw WebError.consoleBadRequest { $0.resendProblem(problem) }
            }
            return WebController.seeOther(Self.page(of: outcome))
        }
        registerComposer(on: debug)
    }

    /// Where the console goes after a resend: the new exchange's page, or the pause a breakpoint made of it.
    static func page(of outcome: ResendOutcome) -> String {
        switch outcome {
        case .ended(let resent): (resent.recordID.map(ConsoleRoute.request) ?? .requests).path
        case .paused(let id): ConsoleRoute.pausedExchange(id).path
        }
    }

    /// Why "Keep returning this" made no rule, in the page's words: a body that is no JSON, or the rule's own problem.
    private static func keepRefusal(_ error: any Error, _ words: ConsoleWords) -> String {
        if let error = error as? OrderedJSON.ParseError { return words.keptNeedsJSON(words.jsonProblem(error)) }
        if let problem = error as? RuleProblem { return words.ruleProblem(problem) }
        return (error as? KioskError)?.description ?? String(describing: error)
    }

    /// The largest edit form accepted: a response body may be big (a Marvel page is ~75 KB).
    static var maximumEditBytes: Int { Breakpoints.maximumEditBytes }

    private func paused(_ rawID: String) throws -> PausedExchange {
        guard let id = Int(rawID), id > 0 else { throw WebError.consoleBadRequest { $0.badRequestID } }
        guard let exchange = kiosk.debugger.breakpoints.paused(id: id) else {
            throw WebError.consoleNotFound { $0.notPausedAnyMore(Int64(id)) }
        }
        return exchange
    }

    /// Applies the console's decision: continue, abort, or an edit (checked first; a bad edit is shown
    /// again with its error and the request stays paused).
    private func decide(_ exchange: PausedExchange, form: PauseDecisionForm, context: ViewContext) throws -> Response {
        let decision: PauseDecision
        switch form.action {
        case .continue:
            // "Keep returning this" checked with Send unchanged: the answer as shown becomes the rule, as an edit would
            // (a box left checked and unsaid was a rule never made).
            if form.keep, exchange.phase == .response, let status = exchange.status {
                let shown = Data((exchange.responseText.map(DebugPages.editable) ?? "").utf8)
                do {
                    try kiosk.debugger.keepReturning(exchange, status: status, body: shown, name: context.words.keptEditName(exchange.endpoint))
                } catch {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: Self.keepRefusal(error, context.words), draft: form,
                                                                    context: context), status: .unprocessableContent)
                }
            }
            decision = .continueUnchanged
        case .abort: decision = .abort
        case .edit:
            switch exchange.phase {
            case .request:
                // The body as shown (a JSON one laid out), sent back untouched, is the request's own, secrets and all.
                let shown = exchange.requestText.map(DebugPages.editable)?
                    .replacingOccurrences(of: "\r\n", with: "\n")
                func refused(_ problem: String) -> Response {
                    Pages.response(DebugPages.pausedExchange(exchange, error: problem, draft: form, context: context),
                                   status: .unprocessableContent)
                }
                var body: Data?
                if let edited = form.body, let shown, edited != shown {
                    // What was left as shown goes as the request had it; `<redacted>` typed into a changed part is refused.
                    guard let restored = kiosk.debugger.breakpoints.restoringHiddenSecrets(in: edited, shown: shown, ofPaused: exchange.id) else {
                        return refused(context.words.requestBodyHoldsRedacted)
                    }
                    body = restored
                }
                let method = form.method.flatMap { $0.isEmpty || $0 == exchange.method ? nil : $0 }
                if let method, !HTTPSyntax.isToken(method) { return refused(context.words.badMethod) }
                let path = form.path.flatMap { $0 == exchange.path ? nil : $0 }
                if let path, !HTTPSyntax.isAbsolutePath(path) { return refused(context.words.badPath) }
                let headers: [(name: String, value: String)]
                switch Self.editedFields(form.headers ?? "", shown: exchange.requestHeaders, context.words) {
                case .success(let fields): headers = fields
                case .failure(let problem): return refused(problem.sentence)
                }
                decision = .continueWithRequest(query: Self.lines(form.query, separator: "="), headers: headers, body: body,
                                                method: method, path: path)
            case .response, .error:
                // The answer as shown, its echoes of the request's secrets hidden: what was left as shown goes as the
                // upstream sent it; `<redacted>` typed into a changed part is refused.
                var body = Data((form.body ?? "").utf8)
                let typed = body
                if let edited = form.body, edited.contains(Redactor.placeholder),
                   let shown = exchange.responseText.map(DebugPages.editable)?.replacingOccurrences(of: "\r\n", with: "\n") {
                    guard let restored = kiosk.debugger.breakpoints.restoringHiddenSecrets(inAnswer: edited, shown: shown, ofPaused: exchange.id) else {
                        return Pages.response(DebugPages.pausedExchange(exchange, error: context.words.answerBodyHoldsRedacted, draft: form,
                                                                        context: context), status: .unprocessableContent)
                    }
                    body = restored
                }
                // The editor shows JSON indented; an answer the upstream wrote on one line goes on in one line (an app
                // reading it byte for byte, or comparing lengths, sees the edit and not a change of layout).
                if exchange.responseText?.contains("\n") == false, body.contains(UInt8(ascii: "\n")), let edited = try? OrderedJSON.parse(body) {
                    body = Data(edited.compactBytes)
                }
                guard let status = Int(form.status ?? ""), HTTPSyntax.finalStatuses.contains(status) else {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: context.words.statusMustBeNumber,
                                                                    draft: form, context: context), status: .unprocessableContent)
                }
                // A body given to a status that carries none would be dropped on the way, the edit taken and lost unsaid.
                if status == 204 || status == 304, !typed.isEmpty,
                   (form.body ?? "").replacingOccurrences(of: "\r\n", with: "\n")
                    != exchange.responseText.map(DebugPages.editable)?.replacingOccurrences(of: "\r\n", with: "\n") {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: context.words.statusCarriesNoBody(status),
                                                                    draft: form, context: context), status: .unprocessableContent)
                }
                do {
                    try kiosk.debugger.validateEdit(endpoint: exchange.endpoint, url: URL(string: exchange.url) ?? URL(string: "http://invalid/")!,
                                                   status: status, body: body, asJSON: exchange.answersJSON)
                } catch let error as OrderedJSON.ParseError {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: context.words.jsonProblem(error), draft: form,
                                                                    context: context), status: .unprocessableContent)
                } catch let error as KioskError {
                    return Pages.response(DebugPages.pausedExchange(exchange, error: error.description, draft: form, context: context),
                                          status: .unprocessableContent)
                }
                var headers: [(name: String, value: String)]?
                if let text = form.headers {
                    switch Self.editedFields(text, shown: exchange.responseHeaders, context.words) {
                    case .success(let fields): headers = fields
                    case .failure(let problem):
                        return Pages.response(DebugPages.pausedExchange(exchange, error: problem.sentence, draft: form, context: context),
                                              status: .unprocessableContent)
                    }
                }
                // "Keep returning this": the checked edit also becomes a rule that answers it from now on.
                // (As typed: a rule is a file, which no secret reaches.)
                if form.keep {
                    do {
                        try kiosk.debugger.keepReturning(exchange, status: status, body: typed, headers: headers,
                                                         name: context.words.keptEditName(exchange.endpoint))
                    } catch {
                        return Pages.response(DebugPages.pausedExchange(exchange, error: Self.keepRefusal(error, context.words), draft: form,
                                                                        context: context), status: .unprocessableContent)
                    }
                }
                decision = .continueWithResponse(status: status, body: body, headers: headers)
            }
        }
        guard kiosk.debugger.breakpoints.decide(exchange.id, decision) else {
            return Pages.response(DebugPages.pauseEnded(exchange.id, draft: form, context: context), status: .conflict)
        }
        return WebController.seeOther(ConsoleRoute.paused.path)
    }

    /// The header fields of "Name: value" lines (blank lines skipped); throws, in `w`'s words, naming a line without a
    /// colon.
    static func headerFields(_ text: String, _ w: ConsoleWords) throws(FieldsProblem) -> [RequestRecord.HeaderField] {
        for line in text.split(whereSeparator: \.isNewline) where !line.contains(":") && !line.allSatisfy(\.isWhitespace) {
            throw FieldsProblem(sentence: w.headerLineWithoutColon(String(line.prefix(60))))
        }
        return lines(text, separator: ":").map { RequestRecord.HeaderField(name: $0.name, value: $0.value) }
    }

    /// The query items of the composer's "name=value" lines (a line without `=` is a name with an empty value); a line
    /// with nothing before its `=` is refused rather than left out.
    static func queryItems(_ text: String, _ w: ConsoleWords) throws(FieldsProblem) -> [(name: String, value: String)] {
        for line in text.split(whereSeparator: \.isNewline) where line.trimmingCharacters(in: .whitespaces).hasPrefix("=") {
            throw FieldsProblem(sentence: w.queryLineWithoutName(String(line.prefix(60))))
        }
        return lines(text, separator: "=")
    }

    /// Why a form's fields are not taken (an edit's header lines, a rule's number), in the page's words.
    struct FieldsProblem: Error { let sentence: String }

    /// The header fields of an edit's "Name: value" lines, each checked (a line without a colon, a name that is not a
    /// token, a value with a control character, `<redacted>` left in a value changed from the one `shown` — unless nothing
    /// is `shown`: a mock's answer is sent as typed, and no secret stands behind its placeholder).
    static func editedFields(_ text: String, shown: [RequestRecord.HeaderField]?,
                             _ w: ConsoleWords) -> Result<[(name: String, value: String)], FieldsProblem> {
        for line in text.split(whereSeparator: \.isNewline) where !line.contains(":") && !line.allSatisfy(\.isWhitespace) {
            return .failure(FieldsProblem(sentence: w.headerLineWithoutColon(String(line.prefix(60)))))
        }
        let fields = lines(text, separator: ":")
        for field in fields {
            // A name shown with a secret hidden in it (`X-Echo-<redacted>`) is no token, yet stands for the field's own name,
            // which the edit keeps (`Breakpoints.fields`).
            let shownName = shown?.contains { $0.name == field.name } == true && field.name.contains(Redactor.placeholder)
            guard HTTPSyntax.isToken(field.name) || shownName else {
                return .failure(FieldsProblem(sentence: w.badHeaderName(String(field.name.prefix(60)))))
            }
            guard HTTPSyntax.isFieldValue(field.value) else { return .failure(FieldsProblem(sentence: w.badHeaderValue(field.name))) }
            guard let shown else { continue }
            let wasShown = shown.contains { HTTPHeaderFields.sameName($0.name, field.name) && $0.value == field.value }
            if field.value.contains(Redactor.placeholder), !wasShown {
                return .failure(FieldsProblem(sentence: w.headerHoldsRedacted(field.name)))
            }
        }
        return .success(fields)
    }

    /// "name=value" or "Name: value" lines; blank lines skipped.
    static func lines(_ text: String, separator: Character) -> [(name: String, value: String)] {
        text.split(whereSeparator: \.isNewline).compactMap { line in
            let parts = line.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }

    /// What a proxy cache route answers in a process without one (`kiosk serve`).
    static var noProxyCache: WebError {
        WebError.consoleNotFound { $0.noProxyCache }
    }

    /// The debugger, when it has a request log to read; else `CaptureOff`, a 404 page saying so.
    func withLog() throws -> Debugger {
        guard kiosk.debugger.hasRequestLog else { throw CaptureOff(problem: kiosk.debugger.logProblem) }
        return kiosk.debugger
    }

    private func diff(_ request: Request) throws -> ExchangeDiff {
        let query = try FormInput.decode(DiffQuery.self, from: request.uri.query)
        let log = try withLog()
        guard let diff = try log.diff(before: query.a, after: query.b) else {
            // Which one is missing, when one is: the other is there to compare.
            let missing = try [query.a, query.b].filter { try log.record(id: $0) == nil }
            if missing.count == 1, let id = missing.first { throw WebError.consoleNotFound { $0.noSuchRequest(id) } }
            throw WebError.consoleNotFound { [a = query.a, b = query.b] in $0.noSuchPair(a, b) }
        }
        return diff
    }

    func record(_ rawID: String) throws -> RequestRecord {
        guard let id = Int64(rawID), id > 0 else { throw WebError.consoleBadRequest { $0.badRequestID } }
        guard let record = try withLog().record(id: id) else {
            throw WebError.consoleNotFound { $0.noSuchRequest(id) }
        }
        return record
    }
}

/// Who may use the debugger. It shows every request Kiosk makes (redacted, but still a view into the
/// user's reading), so by default only a loopback listener serves it; with a token configured, any
/// listener serves it to a browser that proved it knows the token.
struct DebugAccess: Sendable {
    /// The shared secret, when one is configured (at least `WebConfiguration.minimumDebugTokenLength` visible ASCII characters).
    let token: String?
    /// Whether the web app listens on a loopback address only.
    let isLoopback: Bool
    /// Whether the session cookie is `Secure` (served over HTTPS).
    var secureCookies = false
    /// The clock sessions expire by.
    var now: @Sendable () -> Date = { Date() }
    /// Wrong tokens, rate-limited per client.
    var attempts = ClientAttempts(now: { Date() })
    /// The peer wrong tokens are counted under.
    var peer: PeerReader = socketPeer
    /// On this machine, the local user who owns the peer's socket: wrong tokens are counted per user, so another
    /// user's program guessing cannot lock the console's owner out.
    var owner: @Sendable (Request, WebRequestContext) -> UInt32? = { _, context in context.peerOwner }
    /// How often an open live stream asks whether its browser may still read it.
    var recheckInterval: Duration = DebugController.authorizationRecheckInterval

    static let cookieName = "kiosk_debug"
    /// How long a session lasts after the token was entered.
    static let sessionLifetime: TimeInterval = 12 * 3600

    /// Throws a 403 page (with a token form when a token is configured) unless the request may see the
    /// debugger; returns when its session expires (nil without a token: loopback access does not expire).
    func check(_ request: Request, words: ConsoleWords) throws -> Date? {
        if token != nil {
            guard let expiry = request.cookies[Self.cookieName].flatMap({ sessionExpiry($0.value) }) else {
                throw WebError(status: .forbidden, title: words.debuggerLocked, message: words.enterToken,
                               retryPath: nil, extra: { DebugPages.loginForm($0) }, keepsTitle: true)
            }
            return expiry
        }
        guard isLoopback else {
            throw WebError.forbidden(words.loopbackOnly)
        }
        return nil
    }

    /// `POST /debug/login`: a correct token sets a session cookie (derived from the token, never the token
    /// itself) that opens the console for `sessionLifetime`. Wrong tokens are limited per client like
    /// pairing codes (429 with `Retry-After`), on this machine per local user.
    func login(_ request: Request, context: WebRequestContext) async throws -> Response {
        let form = try await CSRFProtection.verifiedForm(request).decode(DebugLoginForm.self)
        let words = context.view.words
        guard let token else { return WebController.seeOther(ConsoleRoute.requests.path) }
        let address = peer(request, context)
        let client = attempts.client(address, owner: address?.unmapped.isLoopback == true ? owner(request, context) : nil)
        // The console page the token was asked on: where a right token opens, after a wrong one too.
        let back = WebController.localReturnPath(form.returnPath).flatMap { $0.hasPrefix(ConsoleRoute.prefix + "/") || $0 == ConsoleRoute.prefix ? $0 : nil }
        let formAgain: @Sendable (ViewContext) -> HTML = { DebugPages.loginForm($0, returning: back) }
        if case .limited(let seconds) = attempts.attempt(by: client) {
            throw WebError(status: .tooManyRequests, title: words.debuggerLocked, message: words.tooManyTokens(seconds),
                           retryPath: nil, extra: formAgain, keepsTitle: true, retryAfter: seconds)
        }
        // Digests of equal length, so the comparison's time does not even tell the token's length.
        guard let presented = form.token,
              CSRFProtection.constantTimeEqual(Hex.encode(SHA256.hash(data: Data(presented.utf8))),
                                               Hex.encode(SHA256.hash(data: Data(token.utf8)))) else {
            throw WebError(status: .forbidden, title: words.debuggerLocked, message: words.wrongToken,
                           retryPath: nil, extra: formAgain, keepsTitle: true)
        }
        attempts.succeeded(by: client)
        let expiry = Int(now().addingTimeInterval(Self.sessionLifetime).timeIntervalSince1970)
        var response = WebController.seeOther(back ?? ConsoleRoute.requests.path)
        response.setCookie(Cookie(name: Self.cookieName, value: session(expiringAt: expiry, token: token),
                                  maxAge: Int(Self.sessionLifetime), path: ConsoleRoute.prefix, secure: secureCookies, httpOnly: true,
                                  sameSite: .strict))
        return response
    }

    /// A session cookie's value: its expiry (Unix seconds) and an HMAC of it keyed by the token, so only a
    /// holder of the token can make one, it cannot be extended, and changing the token ends every session.
    func session(expiringAt expiry: Int, token: String) -> String {
        let key = SymmetricKey(data: SHA256.hash(data: Data(("kiosk debug session key " + token).utf8)))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("kiosk debug session \(expiry)".utf8), using: key)
        return "\(expiry).\(Hex.encode(mac))"
    }

    /// When the session of a cookie value expires, or nil when it is not one of this token's sessions or has expired.
    func sessionExpiry(_ value: String) -> Date? {
        guard let token else { return nil }
        let parts = value.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let expiry = Int(parts[0]),
              CSRFProtection.constantTimeEqual(value, session(expiringAt: expiry, token: token)) else { return nil }
        let date = Date(timeIntervalSince1970: TimeInterval(expiry))
        return date > now() ? date : nil
    }
}

/// The one gate of the `/debug` group: every console page, JSON answer and form passes `DebugAccess.check`
/// before its handler runs; an answer that lasts (the live stream) ends when the session expires.
struct DebugAccessMiddleware: RouterMiddleware {
    let access: DebugAccess

    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        do {
            guard let expiry = try access.check(request, words: context.view.words) else { return try await next(request, context) }
            var context = context
            let earlier = context.stillAuthorized, now = access.now
            context.stillAuthorized = { earlier() && now() < expiry }
            return try await next(request, context)
        } catch let off as CaptureOff {
            // Said here, where the page's language is known, for every handler that needs the log.
            let words = context.view.words
            if let problem = off.problem {
                throw WebError(status: .serviceUnavailable, title: words.logUnavailable, message: problem, retryPath: nil)
            }
            throw WebError(status: .notFound, title: words.captureOff, message: words.captureOffMessage, retryPath: nil)
        }
    }
}

/// A console page that reads the request log, asked of a Kiosk without one: configured so (`"capture": false`), or
/// whose log could not be opened (`problem` says why).
struct CaptureOff: Error {
    var problem: String?
}

/// A filter that does not parse, under `/debug/api`: the message, the filter, and where the mistake is in
/// it, counted in UTF-16 code units as JavaScript does (`input.setSelectionRange(start, end)` selects it).
struct FilterErrorJSON: Encodable {
    struct Position: Encodable {
        let start: Int
        let end: Int
    }

    let error: String
    let filter: String
    /// Where in `filter` the mistake is; nil when the filter parses but names a key a parameter gives too.
    let position: Position?

    private init(error: String, filter: String, position: Position?) {
        self.error = error
        self.filter = filter
        self.position = position
    }

    init(_ error: FilterSyntaxError) {
        self.init(error: "The filter is not understood: \(error.message).", filter: error.input,
                  position: Position(start: error.utf16Offsets.lowerBound, end: error.utf16Offsets.upperBound))
    }

    /// Why a JSON route refuses `query`: its filter does not parse, or gives a key its own parameter gives too (combined,
    /// one of the two would be dropped); nil when it is fine.
    init?(_ query: DebugFilterQuery) {
        if let error = query.syntaxError {
            self.init(error)
        } else if let (key, text) = query.doubledKey {
            self.init(error: "\(key.rawValue) is given both in filter and as its own parameter; give it once.", filter: text, position: nil)
        } else {
            return nil
        }
    }
}
