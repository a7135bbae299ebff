// The web app's words in English: one value per strings type (Strings.swift).

import Foundation
import KioskCore

extension Strings {
    /// The English words.
    static let english = Strings(
        home: "Home", favorites: "Favorites", catalogs: "Catalogs",
        tagline: "Offline-first reader: everything you have seen stays readable without a network.",
        skipToContent: "Skip to content", languageSwitch: "Language", search: "Search", go: "Go", any: "Any",
        refresh: "Refresh", retry: "Retry", stale: "stale", refreshing: "refreshing…", nothingHere: "Nothing here.",
        noFavorites: "No favorites yet. Tap a star to keep an item here, readable offline.", noMatches: "No matches.",
        previous: "‹ Previous", next: "Next ›", pages: "Pages", edit: "Edit", done: "Done", reset: "Reset",
        resetLabel: { "Reset the \($0) list" },
        errorTitle: { status in
            switch status {
            case 400: "Bad request"
            case 403: "Forbidden"
            case 404: "Not found"
            case 405: "Method not allowed"
            case 429: "Too many requests"
            case 502: "Upstream error"
            case 503: "Offline"
            case 504: "Timed out"
            case 507: "The disk is full"
            default: "Something went wrong"
            }
        }, delete: "Delete", details: "Details", selectItem: "Select an item to see it here.",
        favorite: "Favorite", keywords: "Keywords", readFullArticle: "Read the full article", none: "None",
        andMore: "and more", imageUnavailable: "Image unavailable", loading: "Loading…",
        filtering: "Filtering the items shown; type 3 characters or more to search.",
        filteringUnreachable: "Kiosk is unreachable: filtering the items shown; searching needs Kiosk.",
        loadFailed: "Could not load. Try again.",
        offlineSearching: "Offline — searching saved data only.", inSavedData: " in saved data",
        moreMatch: "; more match: add a word to narrow them.",
        backToCatalogs: "Back to the catalogs", justNow: "just now",
        ago: { "\($0) ago" },
        updated: { "Updated \($0)" },
        offlineSince: { "Offline — showing saved data from \($0)" },
        offlineSaved: "Offline — showing saved data.",
        couldNotRefresh: { "Could not refresh: \($0)" },
        upstreamProblem: englishUpstreamProblem,
        couldNotLoad: { "Could not load this page: \($0)" },
        couldNotSave: { "Could not save this change: \($0)" },
        couldNotSearch: { "Could not search the catalog: \($0)" },
        results: { count, query in "\(count) result\(count == 1 ? "" : "s") for “\(query)”" },
        favoriteOf: { "Favorite: \($0)" },
        moveUp: { "Move \($0) up" }, moveDown: { "Move \($0) down" }, deleteItem: { "Delete \($0)" },
        almostYears: { $0 == 1 ? "Almost 1 year" : "Almost \($0) years" },
        filterName: { $0.capitalized },
        filterValue: { name, value in
            switch (name, value) {
            case ("kind", "emailed"): "Most emailed"
            case ("kind", "viewed"): "Most viewed"
            case ("kind", "shared"): "Most shared"
            case ("period", "1"): "Today"
            case ("period", _): "Last \(value) days"
            default: value.prefix(1).uppercased() + value.dropFirst()
            }
        },
        field: { $0 },
        collection: { $0 },
        resetWarning: { "Forget every deletion and your order of the \($0) list, and show it as the catalog sends it?" },
        cannotMove: { "\($0) could not move to position \($1): the list has changed since this page was shown. It shows as it is now." },
        notInList: { "\($0) is no longer in the list: it was deleted elsewhere. The list shows as it is now." },
        offlineNotSaved: "The catalog can’t be reached right now, and Kiosk hasn’t saved this page yet.",
        timedOutNotSaved: "The catalog is taking too long to answer, and Kiosk hasn’t saved this page yet.",
        itemNotFound: "This catalog has nothing at this address: the item may have been removed, or the link is wrong.",
        noSuchItemID: "No item of this catalog can have this address: the link is wrong.",
        noLinkedPage: { "This item has no page \($0) of linked items." },
        formTokenStale: "The form's security token is missing or out of date. Reload the page and try again.",
        pageNotFound: "There is no page at this address.",
        noSuchCatalog: { "There is no catalog named “\($0)”." },
        pastTheLastPage: { name, total in "\(name) has \(total) page\(total == 1 ? "" : "s")." },
        goToLastPage: { "Go to the last one (page \($0))" },
        noSuchPage: { name, page in "\(name) has no page \(page)." },
        goToFirstPage: "Go to the first page",
        badListAddress: { problem in
            switch problem {
            case .unknownParameter(let name): "This page has no setting called “\(name)”: the address may have been mistyped."
            case .pageBelowOne: "Pages start at 1."
            case .pageNotANumber: "The page must be a whole number."
            case .switchValue(let name): "“\(name)” takes 1 (on) or 0 (off)."
            case .searchTooLong(let limit): "Search text can be at most \(limit) characters long."
            case .filterValueTooLong(let name): "The value asked for \(name) is too long."
            case let .invalidFilterValue(name, value, offered):
                "\(name) can’t be “\(value)” here; choose one of: \(offered.joined(separator: ", "))."
            }
        },
        skippedItems: { $0 == 1 ? "1 item of this page came unreadable from the catalog and is left out."
                                  : "\($0) items of this page came unreadable from the catalog and are left out." },
        species: { $0 },
        ofFemaleCharacter: { $0 },
        noneInCollection: { _ in "None" },
        marvelCounts: { comics, series in
            let count = { Localized.number($0, language: .en) }
            let parts = [comics == 0 ? nil : comics == 1 ? "1 comic" : "\(count(comics)) comics", series == 0 ? nil : "\(count(series)) series"]
            return parts.contains { $0 != nil } ? parts.compactMap { $0 }.joined(separator: " · ") : "No comics"
        }
    )
}

extension LinkedStrings {
    /// The English words.
    static let english = LinkedStrings(
        onThisPage: "On this page", places: "Places", origin: "Origin", lastLocation: "Last known location",
        episode: "Episode", episodes: "Episodes", characters: "Characters", residents: "Residents", aired: "Aired", dimension: "Dimension",
        unknown: "Unknown", unknownDimension: "Unknown", notSaved: "not saved on this device yet",
        residentCount: { $0 == "1" ? "1 resident" : "\($0) residents" },
        // (Kiosk's store, not the device's saved pages: "on this device" is what a phone keeps itself.)
        missing: { $0 == 1 ? "1 linked item is not in Kiosk's store and could not be fetched from the catalog."
                   : "\($0) linked items are not in Kiosk's store and could not be fetched from the catalog." },
        skipped: { $0 == 1 ? "1 linked item could not be read and is left out." : "\($0) linked items could not be read and are left out." })
}

extension DeviceStrings {
    /// The English words.
    static let english = DeviceStrings(
        onThisDevice: "On this device", saveForOffline: "Save for offline",
        saveForOfflineHint: "While Kiosk is reachable, this device keeps page 1 of each catalog and your favorites, "
            + "with their details and pictures, to read when it is not.",
        storageLimit: "Space for saved pages", clear: "Clear saved pages",
        offlineTitle: "Not saved on this device",
        offlineMessage: "Kiosk is unreachable, and this page was not saved on this device. These pages were:",
        savedPages: "Saved on this device", noSavedPages: "Nothing is saved on this device yet.",
        otherSavedPages: "Other pages",
        unreachable: "Kiosk is unreachable — showing what this device saved {ago}",
        slow: "Kiosk is taking too long to answer — showing what this device saved {ago}",
        holds: "This device holds {size} of {limit}: {pages} and {images}.",
        savedAgo: "Last saved for offline {ago}.", neverSaved: "Pages are kept as you read them; the full save for offline reading has not run yet.",
        saving: "Saving for offline… {done} of {total}",
        persisted: "The browser keeps it until you clear it.",
        notPersisted: "The browser may clear it when the device runs low on space.",
        cleared: "Saved pages cleared.",
        pageOne: "1 page", pageMany: "{n} pages", pictureOne: "1 picture", pictureMany: "{n} pictures",
        pendingOne: "1 change is waiting to be sent to Kiosk.", pendingMany: "{n} changes are waiting to be sent to Kiosk.",
        pending: "waiting to be sent",
        failedOne: "1 change could not be applied: {reason}", failedMany: "{n} changes could not be applied: {reason}",
        newVersion: "A new version of Kiosk is ready.", reload: "Reload",
        pendingRefused: "Kiosk could not take it yet ({reason}); it is sent again on its own.",
        resetPending: "Reset waits to be sent: the list goes back to its original order once Kiosk answers.",
        deleted: "{title} deleted.", undo: "Undo", unstarred: "{title} removed from favorites.",
        deletedMany: "{titles} deleted.", unstarredMany: "{titles} removed from favorites.",
        moved: "{title}: position {n} of {total}.",
        languageNeedsKiosk: "Kiosk is unreachable: the language can be switched once it answers.",
        historyNeedsKiosk: "Kiosk is unreachable: the reading history can be cleared once it answers.",
        historyCleared: "Reading history cleared.",
        unreachableLoaded: "Kiosk is unreachable — this page is as it was loaded {ago}",
        notSaved: "Not saved on this device",
        nextUnreachable: "Kiosk is unreachable: the next page can be loaded once it answers.",
        shownOne: "1 item shown.", shownMany: "{n} items shown.",
        resetDone: "The list is back in its original order.")
}

extension PairingStrings {
    /// The English words.
    static let english = PairingStrings(
        title: "Pair this device",
        intro: "Kiosk answers the browsers of your network once they are paired. To read it here, enter the pairing code that "
            + "kiosk serve --lan shows in its terminal, or that kiosk devices pair shows there. You do this once per browser.",
        codeLabel: "Pairing code", codeHint: "8 digits, like 1234-5678", submit: "Pair",
        fingerprintHint: "Before you enter it, check that the certificate fingerprint your browser shows matches the one in "
            + "that terminal.",
        wrongCode: "That is not the pairing code. Check the terminal where you asked for it.",
        burned: "Too many wrong codes were tried, so that code no longer works: run kiosk devices pair on the computer running "
            + "Kiosk for a new one.",
        noOpenCode: "No pairing code is open: a code works once, for 10 minutes. Run kiosk devices pair on the computer running "
            + "Kiosk and enter the code it shows.",
        alreadyPaired: "This browser is already paired: pairing again replaces nothing and adds a new device.",
        notNeeded: "This Kiosk answers this computer only, whose browsers need no pairing. To read it on a phone or another "
            + "computer on the same network, start it with kiosk serve --lan: it prints the address to open there, and that "
            + "device is asked for a code, which kiosk devices pair shows.",
        attemptsLeft: { $0 == 1 ? "1 more try this minute." : "\($0) more tries this minute." },
        tooMany: { "Too many wrong codes were tried. Try again in \($0) s." })
}

/// What went wrong with the catalog, in English (`Strings.upstreamProblem`).
private func englishUpstreamProblem(_ error: KioskError) -> String {
    switch error {
    case .httpStatus(let status, _) where status >= 500: "the catalog had a server error (HTTP \(status))."
    case .httpStatus(let status, _): "the catalog answered HTTP \(status)."
    case .rateLimited(_, let seconds): "the catalog asks Kiosk to slow down" + (seconds.map { " for \($0) s." } ?? ".")
    case .unauthorized: "the catalog did not accept Kiosk’s key."
    case .malformedResponse: "the catalog’s answer could not be read."
    case .truncatedBody: "the catalog’s answer arrived cut short."
    case .timeout: "the catalog took too long to answer."
    case .stalledBody: "the catalog’s answer stopped coming halfway."
    case .offline: "the catalog cannot be reached."
    case .transport: "the connection to the catalog failed."
    case .unreadableAnswer(_, .larger(let limit)):
        "the catalog’s answer is larger than \(KioskError.AnswerProblem.size(limit)), more than Kiosk reads."
    case .unreadableAnswer(_, .expandsTooMuch(let ratio)):
        "the catalog’s answer unpacks to more than \(ratio) times its size, as a decompression bomb does, so Kiosk refused it."
    case .unreadableAnswer(_, .corruptCoding): "the catalog’s answer is compressed in a way that cannot be unpacked."
    case .refused: "Kiosk’s rules for outbound requests refused the address."
    case .storage where error.isDiskFull: "the disk is full."
    case .storage: "Kiosk could not store the answer."
    case .notFound: "the catalog no longer has it."
    case .cancelled: "the request was cancelled."
    case .invalidRequest(let message): message
    }
}

extension RefusalStrings {
    static let english = RefusalStrings(
        noSuchFile: { "There is no file named “\($0)” here; reload the page for the current ones." },
        badPictureAddress: "The url parameter must be an absolute http(s) URL.",
        pictureAddressRequired: "The url parameter is required.",
        picturesNotServed: { "Images from \($0 ?? "that host") are not served." },
        givenTwice: { "The parameter \"\($0)\" is given twice." },
        badPercentEncoding: "The query string is not validly percent-encoded.",
        controlCharacters: "The query string contains control characters.",
        queryTooLong: { "The query string is longer than \($0) characters." },
        malformedNear: { "The query string is malformed near \"\($0)\"." },
        notPlainValues: "The query string is malformed: each parameter takes one plain value.",
        fromAnotherSite: { origin in "This form was sent from another site\(origin.map { " (\($0))" } ?? ""), so it was refused." },
        notForOtherSites: "Kiosk's pages, pictures and API answer Kiosk's own pages, and links followed from elsewhere.",
        noFormHere: "There is no form at this address.",
        tooLarge: { limit in "What was sent is larger than this address accepts\(limit.map { " (at most \($0))" } ?? "")." },
        unknownLanguage: { "The language must be one of: \($0)." })
}
