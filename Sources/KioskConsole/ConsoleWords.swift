// The types of the console's words, a field each, so a word missing in a language is a compile error; the
// values are in ConsoleWords+English.swift and ConsoleWords+Spanish.swift.

import Foundation
import KioskCore
import KioskDebugger
import KioskWeb

/// Every string of the network debugger's console, in one language. Its memberwise initializer takes every field,
/// so a word missing in one language is a compile error, not an English word on a Spanish page. What the console
/// shows of the exchanges themselves (URLs, headers, bodies, error messages from upstreams) is not translated.
struct ConsoleWords: Sendable {
    let networkDebugger: String
    /// The console's name where space is short (the top bar on a phone).
    let debugger: String
    /// The live feed's state, before the count.
    let live: String
    let reconnecting: String
    /// The live list's feed refused by Kiosk, the page already loaded again once: it follows no more.
    let notLive: String
    let requestsLogged: @Sendable (Int) -> String
    let logNotes: String
    let exportHAR: String
    let insights: String
    let mockRules: String
    let rewriteRules: String
    let endpoints: String
    let nothingLogged: String
    let noRequestMatches: String
    let olderRequests: String
    /// “2 requests are paused at a breakpoint. ”, before Decide.
    let pausedCount: @Sendable (Int) -> String
    /// The list's banner while `kiosk proxy` is offline (its link goes to the proxy's page, where it is switched).
    let proxyIsOffline: String
    let decide: String
    let any: String
    let source: String
    let status: String
    /// The protocol the upstream answered in, a fact of a request's page.
    let httpProtocol: String
    let cacheDecision: String
    let slowerThan: String
    let filter: String
    let noResponse: String
    let requests: String
    let cache: String
    let duration: String
    let waterfall: String
    let request: String
    /// A phase of an exchange, as the waterfall's legend and label name it.
    let queued: String
    let connect: String
    let firstByte: String
    let download: String
    let total: String
    /// The status cell of an answer that made no exchange.
    let store: String
    let allRequests: String
    let started: String
    let error: String
    let queuedFact: String
    let connectFact: String
    /// The parts of `connectFact`: the DNS lookup and the TLS handshake.
    let dnsFact: String
    let tlsFact: String
    let timeToFirstByte: String
    let downloadFact: String
    let totalFact: String
    let mockThisResponseLabel: String
    let mockThisResponse: String
    let asCurl: String
    let requestHeaders: String
    let responseHeaders: String
    let requestBody: String
    let responseBody: String
    let none: String
    let bytes: @Sendable (Int) -> String
    /// What marks the decimals of a number ("." in English, "," in Spanish).
    let decimalSeparator: String
    let truncatedTo: @Sendable (Int) -> String
    /// A stored answer's body shown in part: its first bytes, though all of it is kept and replayed.
    let shownFirst: @Sendable (Int) -> String
    /// A body shown decoded from its content coding (gzip), with how many bytes were sent.
    let decodedFrom: @Sendable (_ coding: String, _ sent: Int) -> String
    /// After `decodedFrom`, of a content larger than a page is given (a gzip bomb): how many of its bytes are shown.
    let decodedShownFirst: @Sendable (Int) -> String
    /// After the size of a body nothing of which was kept: why (its coding, nil for a capture limit of 0).
    let withheld: @Sendable (_ coding: String?) -> String
    let treeCut: String
    let binary: String
    let requestTitle: @Sendable (Int64) -> String
    let pausedRequests: String
    let pausedIntro: String
    let switchesOnEndpoints: String
    let nothingPaused: String
    let pausedAt: @Sendable (PausePhase) -> String
    let continuesIn: @Sendable (String) -> String
    /// A paused exchange whose app has gone: left alone, it is aborted in this many seconds.
    let appGoneAbortsIn: @Sendable (String) -> String
    let backToPaused: String
    let notSent: @Sendable (String) -> String
    let requestFailed: @Sendable (String) -> String
    /// Said of a paused exchange whose app closed its side of the connection meanwhile.
    let pausedAppClosed: String
    let queryEditor: String
    let headersEditor: String
    /// A paused request's method and path fields, and a paused answer's header fields.
    let methodEditor: String
    let pathEditor: String
    let responseHeadersEditor: String
    /// Why an edit of a paused exchange is not taken: a method, a path, a header line, a header's name or value.
    let badMethod: String
    let badPath: String
    let headerLineWithoutColon: @Sendable (String) -> String
    /// A query line of the composer with nothing before its `=`.
    let queryLineWithoutName: @Sendable (String) -> String
    let badHeaderName: @Sendable (String) -> String
    let badHeaderValue: @Sendable (String) -> String
    let headerHoldsRedacted: @Sendable (String) -> String
    /// A paused request's body, and what is said when an edit of it still holds a secret Kiosk hid.
    let requestBodyEditor: String
    let requestBodyHoldsRedacted: String
    /// A paused answer's edit that typed `<redacted>` into a part it changed.
    let answerBodyHoldsRedacted: String
    let sendEdited: String
    let sendUnchanged: String
    let abort: String
    let statusMustBeNumber: String
    /// An edited body given a status that carries none (304, 204, 1xx): the app would never see it.
    let statusCarriesNoBody: @Sendable (Int) -> String
    let answerInsteadEditor: String
    let responseEditor: String
    let responseTextEditor: String
    /// A paused answer shown decoded from its coding ({coding}, {size} as it came), and what an edit of it sends.
    let shownDecodedForEditing: @Sendable (_ coding: String, _ size: String) -> String
    /// Instead of the editor, for a body that cannot be edited as text: the size, then why (`BodyNotEditable`).
    let bodyNotEditable: @Sendable (String, DebugPages.BodyNotEditable) -> String
    let keepReturning: String
    /// "Keep returning this" at an error, where what is kept is a mock rule (there is no answer for a rewrite rule to edit).
    let keepAnswering: String
    let answerWithThis: String
    let checkAndSend: String
    let failWithError: String
    /// Under a paused exchange's form, with the time it continues by itself.
    /// The request phase's note: what an edit does to a request not sent yet.
    let requestEditNote: String
    let editNote: String
    /// The editor's note when the paused exchange's app has gone: left alone, it is aborted at the time that follows.
    let appGoneNote: String
    let pausedTitle: @Sendable (Int) -> String
    let anyConfiguredSource: String
    let contentType: String
    let response: String
    let requestsOf: @Sendable (String) -> String
    let pictures: String
    let endpointsIntro: String
    let appHosts: String
    let appHostsIntro: String
    let exchangesLogged: @Sendable (Int) -> String
    /// Above the catalogs' endpoints, when apps' hosts come first.
    let catalogEndpoints: String
    /// Where a rule or a mock came from, as its file keeps it in English (`DebugPages.origin`).
    let fromRequest: @Sendable (String) -> String
    let fromBreakpointEdit: @Sendable (String) -> String
    let addedInConsole: String
    let addedByHand: String
    let addedThroughAPI: String
    /// Above a host's paths.
    let pathsSeen: String
    let morePaths: @Sendable (Int) -> String
    let urlPatterns: String
    let urlPatternsIntro: String
    let breakpointOnRequest: String
    let onResponse: String
    let onError: String
    let breakpointMode: @Sendable (BreakpointMode) -> String
    let saveBreakpoints: @Sendable (String) -> String
    let save: String
    let mocksIntroBefore: String
    let mocksIntroAfter: String
    let noMockRules: String
    /// A mock rule's page: its title (the rule's number), the way back, the answer's legend and hints, its button.
    let editMockTitle: @Sendable (Int) -> String
    let backToMocks: String
    let mockAnswer: String
    let mockStatusHint: String
    let mockHeadersHint: String
    let mockBodyHint: String
    /// A body that is not UTF-8 text (its size): kept as it is, the form editing the rest.
    let mockBinaryBody: @Sendable (String) -> String
    let saveMock: String
    let on: String
    let off: String
    let enable: String
    let disable: String
    let delete: String
    let enableRule: @Sendable (Int) -> String
    let disableRule: @Sendable (Int) -> String
    let deleteRule: @Sendable (Int) -> String
    let state: String
    let hits: String
    let actions: String
    let debugToken: String
    let openDebugger: String
    let debuggerLocked: String
    let captureOff: String
    /// The title of a page that needs the request log when the log could not be opened.
    let logUnavailable: String
    let filterLabel: String
    let filterNotUnderstood: @Sendable (String) -> String
    /// Why a filter does not parse, and what is accepted there: one sentence, without a final period.
    let filterProblem: @Sendable (FilterSyntaxError.Reason) -> String
    let filterApplied: String
    let filterKeys: String
    /// What a key of the filter language accepts (its example is the same in every language).
    let filterKeyMeaning: @Sendable (FilterKey) -> String
    let negationHelp: String
    let wordsHelp: String
    /// Where in an exchange's life rules act, for the pages that explain it.
    let ruleOrder: String
    let rulesIntro: String
    let rulesHowTo: String
    let newRule: String
    let noRewriteRules: String
    let resetHitsLabel: @Sendable (Int) -> String
    let resetHits: String
    let name: String
    let matches: String
    let does: String
    let editRuleTitle: @Sendable (Int) -> String
    let anyEndpoint: String
    let anyMethod: String
    let nameHint: String
    let enabled: String
    let whichRequests: String
    let endpoint: String
    let urlPattern: String
    let urlPatternHint: String
    let method: String
    let whatItDoes: String
    let statusHint: String
    let headersToSet: String
    let headersToSetHint: String
    let headersToRemove: String
    let headersToRemoveHint: String
    let patch: String
    let patchHint: String
    let latency: String
    let latencyHint: String
    let failRequest: String
    let noAnswer: String
    let failure: @Sendable (RuleFailure) -> String
    let createRule: String
    let saveRule: String
    let backToRules: String
    let notSaved: @Sendable (String) -> String
    let makeRuleLabel: String
    let makeRule: String
    let ruleTouch: @Sendable (Int, String) -> String
    let mockTouch: @Sendable (Int, String) -> String
    let breakpointTouch: @Sendable (String, Int) -> String
    /// "Tunnel to example.com:443, not decrypted".
    let tunnelTouch: @Sendable (String) -> String
    /// The label of a streamed answer's note.
    let streamTouch: String
    /// The label of an exchange whose upstream certificate was not checked.
    let insecureTouch: String
    let uncleanEndTouch: String
    /// An exchange whose app closed its side of the connection before the answer came (`ExchangeTouch.Kind.appClosed`).
    let appClosedTouch: String
    /// A request whose body did not come whole, never sent (`ExchangeTouch.Kind.bodyCut`).
    let bodyCutTouch: String
    /// The proxy page's title.
    let proxy: String
    /// The proxy page's cache section: its title, what it does, how it answers now, its switches and table.
    let proxyCache: String
    let proxyCacheIntro: String
    let proxyCacheFallback: String
    let proxyCacheOff: String
    let proxyCacheOffline: String
    let proxyCacheHTTP: String
    let cacheMode: String
    let cacheModeFallback: String
    let cacheModeHTTP: String
    let cacheModeOff: String
    let goOffline: String
    let goOnline: String
    let proxyCacheEmpty: String
    /// Before the reason an answer could not be stored.
    let proxyCacheCannotStore: String
    /// The summary of a host's list of stored answers.
    let proxyCacheAnswersOf: @Sendable (String) -> String
    /// Under a host's answers when there are more than shown: how many, and the command that lists them all.
    let proxyCacheMoreAnswers: @Sendable (_ shown: Int, _ total: Int, _ host: String) -> String
    /// One stored answer's page: its title, its status, age in seconds and uses, and the button that removes it.
    let proxyCacheEntry: String
    let proxyCacheEntryFacts: @Sendable (Int, Int, Int) -> String
    /// A stored answer whose URL a request changed this many seconds ago, after it was stored: when it is given.
    let proxyCacheEntryChanged: @Sendable (Int) -> String
    /// The request fields a stored answer varies on, with the values it was asked with (nil: without the field), in a
    /// line: what tells two answers to one URL apart.
    let proxyCacheVaried: @Sendable ([ProxyCacheEntry.VariedField]) -> String
    let proxyCacheRemove: String
    /// One host's line: its answers, their size, and how many times they were given instead of the upstream's.
    let proxyCacheRow: @Sendable (Int, String, Int) -> String
    let proxyCacheClearHost: String
    let proxyCacheClearAll: String
    /// What the browser asks before the whole cache is cleared: how many answers go.
    let proxyCacheClearAllConfirm: @Sendable (Int) -> String
    /// What the browser asks before the request log is cleared (no count: live rows arrive after the page was made).
    let clearConfirm: String
    /// What the browser asks before a mock rule or a rewrite rule (its number) is deleted: nothing brings it back.
    let deleteRuleConfirm: @Sendable (Int) -> String
    /// The total line: answers and size, in words.
    let proxyCacheTotal: @Sendable (Int, String) -> String
    let proxyNone: String
    let proxyListeners: String
    let forwardListener: String
    /// A reverse listener, given its upstream.
    let reverseListener: @Sendable (String) -> String
    let proxyPassword: String
    let proxyInsecure: String
    let proxyCounts: String
    let countOpenConnections: String
    let countConnections: String
    let countRequests: String
    let countIntercepted: String
    let countTunnels: String
    let countUpgrades: String
    let countRefused: String
    let countCutShort: String
    let proxyTrust: String
    let proxyFingerprint: String
    let downloadPEM: String
    let downloadDER: String
    let downloadProfile: String
    /// The --intercept patterns.
    let proxyReads: @Sendable (String) -> String
    /// The --ignore patterns.
    let proxyIgnores: @Sendable (String) -> String
    let proxySetupPage: String
    let proxyNotReading: String
    let applied: String
    let didNotApply: String
    let touchedBy: String
    let editAndResendTitle: @Sendable (Int64) -> String
    let urlWithoutQuery: String
    /// The composer's URL hint: the source's name, and whether its keys are put back.
    let urlHint: @Sendable (String, Bool) -> String
    let queryItems: String
    let queryHint: @Sendable (_ placeholder: String, _ fromSource: Bool) -> String
    let headers: String
    let headersHint: @Sendable (_ placeholder: String, _ fromSource: Bool) -> String
    let body: String
    let bodyHint: String
    /// In place of the composer's body, for one that is no text: its size, and that it goes as logged.
    let binaryBodyKept: @Sendable (String) -> String
    /// The same for a body that is no text and was cut at capture: it cannot be sent again.
    let binaryBodyCut: @Sendable (String) -> String
    let send: String
    let revertTo: @Sendable (Int64) -> String
    let backToRequest: @Sendable (Int64) -> String
    let composeNote: @Sendable (Int64) -> String
    let editAndResendLabel: String
    let editAndResend: String
    let replayLabel: String
    let replay: String
    /// Said in place of Replay: why the request cannot be sent again unchanged, and what to do.
    let replayRefused: @Sendable (String) -> String
    let compare: String
    let compareWithPrevious: @Sendable (Int64) -> String
    let noEarlierAnswer: String
    let compareWithRequest: String
    /// The form that picks two requests to compare (`/debug/diff` asked with none): its title and its two fields.
    let compareTwo: String
    /// The name of a rule made by "Keep returning this" at a breakpoint (the endpoint's): data, stored in the page's language.
    let keptEditName: @Sendable (String) -> String
    let compareFirst: String
    let bodySize: String
    let noBody: String
    let summary: String
    let theSame: String
    let sameBytes: String
    /// In place of a body comparison when a side (its number) is a 304, which has no body.
    let notModifiedNoBody: @Sendable (Int64) -> String
    /// A paused 304 (a revalidation): no body to edit, and what to do to edit one.
    let pausedNotModified: String
    let sameJSON: String
    /// “3 changes: 1 added, 1 removed, 1 changed” (`more` when the list was cut).
    let changeCounts: @Sendable (Int, Bool, Int, Int, Int) -> String
    let added: String
    let removed: String
    let onlyFirstChanges: String
    let comparedByLine: @Sendable (Int, Int) -> String
    /// In place of `comparedByLine` when the bodies of the requests named were cut at capture (no whole JSON to compare).
    let comparedCutByLine: @Sendable ([Int64], Int, Int) -> String
    let onlyFirstLines: String
    let overRequests: @Sendable (Int) -> String
    let cacheDecisions: String
    let freshDecisions: String
    let staleDecisions: String
    let fromUpstream: String
    let mockedOrEdited: String
    let slowestEndpoints: String
    let noUpstreamYet: String
    let slowest: String
    let p95ToScale: String
    let bytesBySource: String
    let responseBytes: String
    let otherSources: String
    /// The tree editor's labels ({path}, {key}, {index} are filled in by the script).
    let typeOf: String
    /// How an endpoint's answers are kept.
    let endpointCaching: @Sendable (EndpointCaching) -> String
    /// What an endpoint's body yields (`ResponseModel.Yield`), after its shape.
    let responseYields: @Sendable (ResponseModel.Yield) -> String
    /// The JSON types' names in the tree editor's type menu.
    let typeString: String, typeNumber: String, typeBoolean: String, typeNull: String
    let valueOf: String
    let keyIn: String
    let removeKey: String
    let removeItem: String
    let addTo: String
    let addKey: String
    let addItem: String
    let editAsText: String
    let editAsTree: String
    /// The text editor's body is no JSON, so no tree ({reason} at {position}, from 1); the reasons follow.
    let notJSON: String
    let jsonExpectedKey: String, jsonExpectedColon: String, jsonExpectedCommaOrBrace: String, jsonExpectedCommaOrBracket: String
    let jsonExpectedValue: String, jsonUnterminatedString: String, jsonBadString: String, jsonTextAfterEnd: String
    /// A number field of the tree editor that holds no number, when its form is sent ({path}).
    let notANumber: String
    /// The script's counts, one and several ({count}).
    let requestsLoggedOne: String
    let requestsLoggedOther: String
    /// What a screen reader is told of rows the live list gained, at most every few seconds ({count}).
    let newRowsOne: String
    let newRowsOther: String
    let pausedOne: String
    let pausedOther: String
    let enterToken: String
    let loopbackOnly: String
    let tooManyTokens: @Sendable (Int) -> String
    let wrongToken: String
    let captureOffMessage: String
    let host: String
    let type: String
    let size: String
    let time: String
    let failureColumn: String
    /// The status cell of an exchange that got no response.
    let failed: String
    /// The status cell of an exchange in flight whose answer has not come.
    let pending: String
    /// An exchange in flight's row, said on its name: it is listed in full once it ends.
    let inFlightNote: String
    /// An exchange in flight whose app closed its connection (it goes on until it ends).
    let appGoneInFlight: String
    /// The status cell of an exchange held at a breakpoint, and what its row's link says.
    let pausedRowStatus: String
    let pausedRowNote: String
    let answeredFromStore: String
    let copy: String
    let copied: String
    let copyCurl: String
    let pauseNextRequest: String
    let nextRequestPauses: String
    let quickFilters: String
    let chipAll: String
    let chipAPI: String
    let chipPictures: String
    let chipStore: String
    let chipErrors: String
    let clear: String
    let clearLabel: String
    let pauseRecording: String
    let resumeRecording: String
    let recordingPaused: String
    /// Exchanges answered but not logged (the log could not keep up, or could not write), by count.
    let requestsUnlogged: @Sendable (Int) -> String
    /// Error pages: a request id the log does not hold (evicted, or never), one that is not a number, a diff not
    /// given two ids, and a pause that ended before it was answered.
    let noSuchRequest: @Sendable (Int64) -> String
    /// A comparison of two requests one of which is not in the log.
    let noSuchPair: @Sendable (Int64, Int64) -> String
    /// A rewrite rule, a mock rule or an endpoint the console has not.
    let noSuchRule: @Sendable (Int) -> String
    /// A rule's edit saved after the rule changed elsewhere (another console, `kiosk rule edit`).
    let ruleChangedElsewhere: String
    /// A mock's edit saved after its answer changed elsewhere (another console, `kiosk mock edit`).
    let mockChangedElsewhere: String
    let noSuchMock: @Sendable (Int) -> String
    let noSuchEndpoint: @Sendable (String) -> String
    let badRequestID: String
    let badRuleID: String
    let badStoredAnswerID: String
    /// A rule's or mock's form posted to an action it has not (enable, disable, delete, reset-hits).
    let noSuchRuleAction: String
    /// Make a mock pressed on a request with no answer, or one whose body was cut at capture (its id).
    let nothingToMock: @Sendable (Int64) -> String
    let mockBodyCut: @Sendable (Int64) -> String
    /// The proxy's CA downloads asked of a proxy that reads no HTTPS, and a download it has not (the page listing them).
    let proxyHasNoCA: String
    let noSuchDownload: @Sendable (String) -> String
    /// A stored answer's id that names none (evicted, cleared, or never).
    let noStoredAnswer: @Sendable (Int64) -> String
    /// A proxy cache's page asked of `kiosk serve`, which runs none.
    let noProxyCache: String
    /// What is wrong with a list's address.
    let listQueryProblem: @Sendable (ListQueryProblem) -> String
    /// What stands for the address in the image endpoint's URL: any picture's.
    let pictureAddress: String
    /// The cache page's form said none of its changes, or one it does not know.
    let proxyCacheFormUnknown: String
    /// Offline asked with mode off, and mode off asked while offline: refused, as the command line refuses them.
    let proxyOfflineNeedsCache: String
    let proxyOffNeedsOnline: String
    let diffNeedsTwoIDs: String
    let notPausedAnyMore: @Sendable (Int64) -> String
    /// Under `notPausedAnyMore` when an edit came too late: it is shown, not lost.
    let editNotSent: String
    /// Why a rewrite rule the form describes cannot be kept.
    let ruleProblem: @Sendable (RuleProblem) -> String
    /// "Keep returning this" with a body that is no JSON ({the JSON problem}).
    let keptNeedsJSON: @Sendable (String) -> String
    /// Why a body is not JSON: where (its JSON path and byte) and what.
    let jsonProblem: @Sendable (OrderedJSON.ParseError) -> String
    /// A rule form's latency that is no whole number.
    let latencyNotANumber: String
    /// A rule form's failure that is none of these (listed).
    let unknownFailure: @Sendable (String) -> String
    /// Why a logged request cannot be sent again, as it was or as edited.
    let resendProblem: @Sendable (ResendProblem) -> String
    /// What a mock, a breakpoint, a resend or a rule did to an exchange (`ExchangeTouch.Phrase`).
    let touchPhrase: @Sendable (ExchangeTouch.Phrase) -> String
    /// What a rewrite rule does, in short: "status 503 · remove ETag · JSON Patch · +800 ms".
    let ruleActions: @Sendable (RewriteRule.Actions) -> String
}

extension ConsoleWords {
    /// A rule's name as the console shows it: the one it was given, else what it matches and does, in these words
    /// (`RewriteRule.displayName` says it in English, for the command line).
    func ruleName(_ rule: RewriteRule) -> String { rule.displayName(sayingActions: ruleActions) }

    /// The console's words in `language`.
    static func `in`(_ language: Language) -> ConsoleWords {
        switch language {
        case .en: .english
        case .es: .spanish
        }
    }
}

extension ViewContext {
    /// The console's words in the page's language.
    var words: ConsoleWords { .in(language) }
}

extension WebError {
    /// A console page's 404 whose JSON says `words` in English and whose page says them in the page's language, with a
    /// way back to the console's list.
    static func consoleNotFound(_ words: @escaping @Sendable (ConsoleWords) -> String) -> WebError {
        var error = WebError.notFound(words(.english))
        error.said = { words($0.words) }
        error.extra = { DebugPages.backToRequests($0.words) }
        return error
    }

    /// The same for a 400.
    static func consoleBadRequest(_ words: @escaping @Sendable (ConsoleWords) -> String) -> WebError {
        var error = WebError.badRequest(words(.english))
        error.said = { words($0.words) }
        error.extra = { DebugPages.backToRequests($0.words) }
        return error
    }
}

/// What `debug.js` shows, from the same words: as JSON in the console's `data-words`, by the name the script asks
/// for, encoded once per language.
enum ScriptWords {
    /// The JSON of `language`'s script words.
    static func json(_ language: Language) -> String {
        switch language {
        case .en: english
        case .es: spanish
        }
    }

    private static let english = encode(.english)
    private static let spanish = encode(.spanish)

    private static func encode(_ w: ConsoleWords) -> String {
        let words = [
            "live": w.live,
            "reconnecting": w.reconnecting,
            "notLive": w.notLive,
            "typeOf": w.typeOf,
            "typeString": w.typeString,
            "typeNumber": w.typeNumber,
            "typeBoolean": w.typeBoolean,
            "typeNull": w.typeNull,
            "valueOf": w.valueOf,
            "keyIn": w.keyIn,
            "removeKey": w.removeKey,
            "removeItem": w.removeItem,
            "addTo": w.addTo,
            "addKey": w.addKey,
            "addItem": w.addItem,
            "editAsText": w.editAsText,
            "editAsTree": w.editAsTree,
            "notJSON": w.notJSON,
            "jsonExpectedKey": w.jsonExpectedKey,
            "jsonExpectedColon": w.jsonExpectedColon,
            "jsonExpectedCommaOrBrace": w.jsonExpectedCommaOrBrace,
            "jsonExpectedCommaOrBracket": w.jsonExpectedCommaOrBracket,
            "jsonExpectedValue": w.jsonExpectedValue,
            "jsonUnterminatedString": w.jsonUnterminatedString,
            "jsonBadString": w.jsonBadString,
            "jsonTextAfterEnd": w.jsonTextAfterEnd,
            "notANumber": w.notANumber,
            "requestsLoggedOne": w.requestsLoggedOne,
            "requestsLoggedOther": w.requestsLoggedOther,
            "newRowsOne": w.newRowsOne,
            "newRowsOther": w.newRowsOther,
            "pausedOne": w.pausedOne,
            "pausedOther": w.pausedOther,
            "copied": w.copied
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(words)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }
}
