// The types of the web app's words, a field each, so a word missing in a language is a compile error; the
// values are in Strings+English.swift and Strings+Spanish.swift.

import Foundation
import KioskCore

/// Every string of the web app's interface, in one language. A struct rather than a lookup table, so a
/// string missing in one language is a compile error, not an English word in a Spanish page. A class, so
/// handing a page its strings shares the one instance rather than copying some sixty fields.
final class Strings: Sendable {
    let home: String
    let favorites: String
    let catalogs: String
    let tagline: String
    let skipToContent: String
    let languageSwitch: String
    let search: String
    let go: String
    let any: String
    let refresh: String
    let retry: String
    let stale: String
    let refreshing: String
    let nothingHere: String
    let noFavorites: String
    let noMatches: String
    let previous: String
    let next: String
    let pages: String
    let edit: String
    let done: String
    let reset: String
    /// An error page's title for its HTTP status ("Not found").
    let errorTitle: @Sendable (Int) -> String
    /// "Reset the Dogs list": the label of a user-ordered list's Reset, with the catalog's name.
    let resetLabel: @Sendable (String) -> String
    let delete: String
    let details: String
    let selectItem: String
    let favorite: String
    let keywords: String
    let readFullArticle: String
    let none: String
    let andMore: String
    let imageUnavailable: String
    let loading: String
    let filtering: String
    /// The search hint while Kiosk is unreachable: the text filters the rows shown.
    let filteringUnreachable: String
    let loadFailed: String
    let offlineSearching: String
    let inSavedData: String
    /// After a count of the store's results, when more stored items match than the best ones shown.
    let moreMatch: String
    let backToCatalogs: String
    let justNow: String
    let ago: @Sendable (String) -> String
    let updated: @Sendable (String) -> String
    let offlineSince: @Sendable (String) -> String
    let offlineSaved: String
    let couldNotRefresh: @Sendable (String) -> String
    /// What went wrong with the catalog, as a person would say it (the debugger and the JSON keep the technical
    /// message, with its redacted URL): "the catalog had a server error (HTTP 500)".
    let upstreamProblem: @Sendable (KioskError) -> String
    /// An error page's words when nothing is saved and the catalog failed: "Could not load this page: " + the problem.
    let couldNotLoad: @Sendable (String) -> String
    /// A change (a star, a deletion) Kiosk could not store: "Could not save this change: " + the problem.
    let couldNotSave: @Sendable (String) -> String
    let couldNotSearch: @Sendable (String) -> String
    let results: @Sendable (Int, String) -> String
    /// A star's accessible name, the same whether the item is a favorite or not (its pressed state says which,
    /// as a toggle button's name must not change with it): "Favorite: " + the item's title.
    let favoriteOf: @Sendable (String) -> String
    let moveUp: @Sendable (String) -> String
    let moveDown: @Sendable (String) -> String
    let deleteItem: @Sendable (String) -> String
    let almostYears: @Sendable (Int) -> String
    let filterName: @Sendable (String) -> String
    let filterValue: @Sendable (String, String) -> String
    let field: @Sendable (String) -> String
    let collection: @Sendable (String) -> String
    /// A Rick and Morty species as the API writes it ("Human"), in the language; unknown ones as they are.
    let species: @Sendable (String) -> String
    /// A word said of a character (its status, its species, as `filterValue` and `species` say them) agreeing with a
    /// female character: Spanish "Vivo" is "Viva" of Summer; a language or a word that does not inflect keeps it.
    let ofFemaleCharacter: @Sendable (String) -> String
    /// "None" under a Marvel collection named in English ("Stories"): Spanish agrees with its noun ("Ninguna").
    let noneInCollection: @Sendable (String) -> String
    /// What Reset does, asked before it is done: "Forget your deletions and order of the Dogs list?".
    let resetWarning: @Sendable (String) -> String
    /// A move refused because the list changed since its page was shown: the item's name, the position asked (from 1).
    let cannotMove: @Sendable (String, Int) -> String
    /// A move or deletion of an item no longer in the list (deleted from another device): its name.
    let notInList: @Sendable (String) -> String
    /// An error page's words when Kiosk saved nothing for it and the catalog's upstream cannot be reached (Kiosk
    /// itself answers: the device is online, so neither "offline" nor the device is the subject).
    let offlineNotSaved: String
    /// The same when the upstream took too long.
    let timedOutNotSaved: String
    /// A page for an item, or an address, that is not there: what a person is told (the JSON keeps the detail).
    let itemNotFound: String
    /// A 400 page for an id no item of the catalog can have (Marvel's are numbers).
    let noSuchItemID: String
    /// A 404 page for a page past an item's linked items (a location's residents): "This item has no page 3 of …".
    let noLinkedPage: @Sendable (Int) -> String
    /// A form posted without its page's security token, or with an old one.
    let formTokenStale: String
    let pageNotFound: String
    /// The catalog a path names does not exist.
    let noSuchCatalog: @Sendable (String) -> String
    /// "Rick and Morty has 42 pages.": a page past a catalog's last, with its name and page count.
    let pastTheLastPage: @Sendable (String, Int) -> String
    /// "Go to the last one (page 42)".
    let goToLastPage: @Sendable (Int) -> String
    /// "Rick and Morty has no page 43." when its count is not known.
    let noSuchPage: @Sendable (String, Int) -> String
    /// "Go to the first page".
    let goToFirstPage: String
    /// A list address that asks for what the list does not offer (a parameter it does not know, a page below 1, an
    /// overlong search or filter value), written by hand or cut short: the problem, then what the list offers.
    let badListAddress: @Sendable (BadListAddress) -> String
    /// Under a list: how many of the page's items the catalog sent unreadable, left out (the debugger has the detail).
    let skippedItems: @Sendable (Int) -> String
    /// A Marvel character's counts: "12 comics · 3 series", "No comics".
    let marvelCounts: @Sendable (_ comics: Int, _ series: Int) -> String

    /// Every string, named.
    init(home: String,
         favorites: String,
         catalogs: String,
         tagline: String,
         skipToContent: String,
         languageSwitch: String,
         search: String,
         go: String,
         any: String,
         refresh: String,
         retry: String,
         stale: String,
         refreshing: String,
         nothingHere: String,
         noFavorites: String,
         noMatches: String,
         previous: String,
         next: String,
         pages: String,
         edit: String,
         done: String,
         reset: String,
         resetLabel: @escaping @Sendable (String) -> String,
         errorTitle: @escaping @Sendable (Int) -> String,
         delete: String,
         details: String,
         selectItem: String,
         favorite: String,
         keywords: String,
         readFullArticle: String,
         none: String,
         andMore: String,
         imageUnavailable: String,
         loading: String,
         filtering: String,
         filteringUnreachable: String,
         loadFailed: String,
         offlineSearching: String,
         inSavedData: String,
         moreMatch: String,
         backToCatalogs: String,
         justNow: String,
         ago: @escaping @Sendable (String) -> String,
         updated: @escaping @Sendable (String) -> String,
         offlineSince: @escaping @Sendable (String) -> String,
         offlineSaved: String,
         couldNotRefresh: @escaping @Sendable (String) -> String,
         upstreamProblem: @escaping @Sendable (KioskError) -> String,
         couldNotLoad: @escaping @Sendable (String) -> String,
         couldNotSave: @escaping @Sendable (String) -> String,
         couldNotSearch: @escaping @Sendable (String) -> String,
         results: @escaping @Sendable (Int, String) -> String,
         favoriteOf: @escaping @Sendable (String) -> String,
         moveUp: @escaping @Sendable (String) -> String,
         moveDown: @escaping @Sendable (String) -> String,
         deleteItem: @escaping @Sendable (String) -> String,
         almostYears: @escaping @Sendable (Int) -> String,
         filterName: @escaping @Sendable (String) -> String,
         filterValue: @escaping @Sendable (String, String) -> String,
         field: @escaping @Sendable (String) -> String,
         collection: @escaping @Sendable (String) -> String,
         resetWarning: @escaping @Sendable (String) -> String,
         cannotMove: @escaping @Sendable (String, Int) -> String,
         notInList: @escaping @Sendable (String) -> String,
         offlineNotSaved: String,
         timedOutNotSaved: String,
         itemNotFound: String,
         noSuchItemID: String,
         noLinkedPage: @escaping @Sendable (Int) -> String,
         formTokenStale: String,
         pageNotFound: String,
         noSuchCatalog: @escaping @Sendable (String) -> String,
         pastTheLastPage: @escaping @Sendable (String, Int) -> String,
         goToLastPage: @escaping @Sendable (Int) -> String,
         noSuchPage: @escaping @Sendable (String, Int) -> String,
         goToFirstPage: String,
         badListAddress: @escaping @Sendable (BadListAddress) -> String,
         skippedItems: @escaping @Sendable (Int) -> String,
         species: @escaping @Sendable (String) -> String,
         ofFemaleCharacter: @escaping @Sendable (String) -> String,
         noneInCollection: @escaping @Sendable (String) -> String,
         marvelCounts: @escaping @Sendable (Int, Int) -> String) {
        self.home = home
        self.favorites = favorites
        self.catalogs = catalogs
        self.tagline = tagline
        self.skipToContent = skipToContent
        self.languageSwitch = languageSwitch
        self.search = search
        self.go = go
        self.any = any
        self.refresh = refresh
        self.retry = retry
        self.stale = stale
        self.refreshing = refreshing
        self.nothingHere = nothingHere
        self.noFavorites = noFavorites
        self.noMatches = noMatches
        self.previous = previous
        self.next = next
        self.pages = pages
        self.edit = edit
        self.done = done
        self.reset = reset
        self.resetLabel = resetLabel
        self.errorTitle = errorTitle
        self.delete = delete
        self.details = details
        self.selectItem = selectItem
        self.favorite = favorite
        self.keywords = keywords
        self.readFullArticle = readFullArticle
        self.none = none
        self.andMore = andMore
        self.imageUnavailable = imageUnavailable
        self.loading = loading
        self.filtering = filtering
        self.filteringUnreachable = filteringUnreachable
        self.loadFailed = loadFailed
        self.offlineSearching = offlineSearching
        self.inSavedData = inSavedData
        self.moreMatch = moreMatch
        self.backToCatalogs = backToCatalogs
        self.justNow = justNow
        self.ago = ago
        self.updated = updated
        self.offlineSince = offlineSince
        self.offlineSaved = offlineSaved
        self.couldNotRefresh = couldNotRefresh
        self.upstreamProblem = upstreamProblem
        self.couldNotLoad = couldNotLoad
        self.couldNotSave = couldNotSave
        self.couldNotSearch = couldNotSearch
        self.results = results
        self.favoriteOf = favoriteOf
        self.moveUp = moveUp
        self.moveDown = moveDown
        self.deleteItem = deleteItem
        self.almostYears = almostYears
        self.filterName = filterName
        self.filterValue = filterValue
        self.field = field
        self.collection = collection
        self.resetWarning = resetWarning
        self.cannotMove = cannotMove
        self.notInList = notInList
        self.offlineNotSaved = offlineNotSaved
        self.timedOutNotSaved = timedOutNotSaved
        self.itemNotFound = itemNotFound
        self.noSuchItemID = noSuchItemID
        self.noLinkedPage = noLinkedPage
        self.formTokenStale = formTokenStale
        self.pageNotFound = pageNotFound
        self.noSuchCatalog = noSuchCatalog
        self.pastTheLastPage = pastTheLastPage
        self.goToLastPage = goToLastPage
        self.noSuchPage = noSuchPage
        self.goToFirstPage = goToFirstPage
        self.badListAddress = badListAddress
        self.skippedItems = skippedItems
        self.species = species
        self.ofFemaleCharacter = ofFemaleCharacter
        self.noneInCollection = noneInCollection
        self.marvelCounts = marvelCounts
    }

}

extension Language {
    /// The words of linked items: Rick and Morty's episodes, places and residents.
    var linked: LinkedStrings { self == .es ? .spanish : .english }
}

/// The words of linked items: a character's episodes and places, a location's residents.
struct LinkedStrings: Sendable {
    /// `unknownDimension`: "unknown" said of a dimension, which Spanish says in the feminine ("Desconocida").
    let onThisPage, places, origin, lastLocation, episode, episodes, characters, residents, aired, dimension, unknown, unknownDimension,
        notSaved: String
    let residentCount: @Sendable (String) -> String
    let missing, skipped: @Sendable (Int) -> String

}

extension Language {
    /// The words of refusals of addresses no page of Kiosk's links: a file of an old version, a picture's bad address.
    var refusals: RefusalStrings { self == .es ? .spanish : .english }
}

/// Refusals of addresses typed, or kept by a page of an older version.
struct RefusalStrings: Sendable {
    /// A static file Kiosk does not have (a page from before an upgrade asks for its old files).
    let noSuchFile: @Sendable (String) -> String
    /// `/image?url=` without an absolute http(s) address.
    let badPictureAddress: String
    /// `/image` without `url=`.
    let pictureAddressRequired: String
    /// `/image?url=` on a host no configured catalog takes pictures from (nil: an address without one).
    let picturesNotServed: @Sendable (_ host: String?) -> String
    /// A query string or form (`FormInput`) with a parameter twice, named.
    let givenTwice: @Sendable (String) -> String
    /// A query string or form with a `%` not followed by two hex digits of UTF-8.
    let badPercentEncoding: String
    /// A query string or form with control characters once decoded.
    let controlCharacters: String
    /// A query string or form over its limit, in characters.
    let queryTooLong: @Sendable (Int) -> String
    /// A query string or form the decoder cannot read near the text given.
    let malformedNear: @Sendable (String) -> String
    /// A list or a map (`q[]=a`) where a form takes one plain value.
    let notPlainValues: String
    /// A form sent from another site (Fetch Metadata, or its Origin, named when known).
    let fromAnotherSite: @Sendable (_ origin: String?) -> String
    /// Another site's page using a page, picture or the API as a resource (`CrossSiteReadGuard`).
    let notForOtherSites: String
    /// A POST to an address that takes none.
    let noFormHere: String
    /// A body over what the address reads, with the limit as `byteSize` says it.
    let tooLarge: @Sendable (_ limit: String?) -> String
    /// `POST /language` with a language Kiosk does not speak, and those it speaks.
    let unknownLanguage: @Sendable (_ offered: String) -> String
}

extension RefusalStrings {
    /// A limit in bytes as the refusals say it: whole megabytes, else kilobytes (a form's 4096 bytes is "4 KB", not "1 MB").
    static func byteSize(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MB" : "\(max(1, bytes >> 10)) KB"
    }
}

extension Language {
    /// The words of what the browser keeps on the device: the offline page, the storage panel, and the
    /// script's banners (Kiosk unreachable, edits waiting, a new version).
    var device: DeviceStrings { self == .es ? .spanish : .english }
}

/// The words of the device's offline copy. The `script` ones go to the page's `data-strings` and carry
/// `{placeholders}` the script fills in (`{ago}` with `Intl.RelativeTimeFormat` in the page's language).
struct DeviceStrings: Sendable {
    let onThisDevice, saveForOffline, saveForOfflineHint, storageLimit, clear: String
    let offlineTitle, offlineMessage, savedPages, noSavedPages: String
    /// The offline page's group of saved pages that are no catalog's nor the favorites' (Home, the console).
    let otherSavedPages: String
    /// What offline.js says (`{name}` marks a value it fills in). `slow`: Kiosk did not answer in time (it may be up,
    /// waiting for a slow catalog), where `unreachable` is no answer at all.
    let unreachable, slow, holds, savedAgo, neverSaved, saving, persisted, notPersisted, cleared: String
    /// The counts `holds` names: "1 page", "{n} pages", "1 picture", "{n} pictures".
    let pageOne, pageMany, pictureOne, pictureMany: String
    let pendingOne, pendingMany, pending, failedOne, failedMany, newVersion, reload: String
    /// After `pendingOne`/`pendingMany` when Kiosk was reached and could not take the first change yet (a full disk):
    /// `{reason}` its words.
    let pendingRefused: String
    /// Above a user-ordered list whose Reset waits to be sent (its original order is Kiosk's to give).
    let resetPending: String
    /// The toast after a deletion ("{title} deleted.") and its button; after a favorite's removal, on the favorites
    /// page ("{title} removed from favorites.").
    let deleted, undo, unstarred: String
    /// The same toast after a second deletion (removal) within its ten seconds: one Undo brings back all of them.
    let deletedMany, unstarredMany: String
    /// What a screen reader is told after a dog moved ("{title}: position {n} of {total}.").
    let moved: String
    /// The toast when the language switch cannot reach Kiosk.
    let languageNeedsKiosk: String
    /// The toast when clearing the reading history cannot reach Kiosk.
    let historyNeedsKiosk: String
    /// The toast once the reading history is cleared.
    let historyCleared: String
    /// The banner when Kiosk went away while a page loaded from it is read (`{ago}`: when it was loaded).
    let unreachableLoaded: String
    /// Beside a row of a list shown from the device (Kiosk unreachable) whose page this device has not saved.
    let notSaved: String
    /// Below a list whose next page could not be appended because Kiosk is unreachable (and the device has no copy).
    let nextUnreachable: String
    /// What a screen reader is told as typing filters the rows shown ("1 item shown.", "{n} items shown.").
    let shownOne, shownMany: String
    /// What a screen reader is told once a user-ordered list was reset.
    let resetDone: String
}

/// Every word the scripts show, for one language, as JSON in `<body data-strings>`: a field each, built from the
/// page's own typed strings, so a word missing in a language is a compile error here as it is in a page.
struct ScriptStrings: Encodable, Sendable {
    let imageUnavailable, loading, filtering, filteringUnreachable, noMatches, loadFailed: String
    let unreachable, slow, holds, savedAgo, neverSaved, saving, persisted, notPersisted, cleared: String
    let pageOne, pageMany, pictureOne, pictureMany: String
    let pendingOne, pendingMany, pending, failedOne, failedMany, newVersion, reload, pendingRefused, resetPending: String
    let deleted, undo, unstarred, deletedMany, unstarredMany, moved, languageNeedsKiosk, historyNeedsKiosk, historyCleared, unreachableLoaded: String
    let notSaved: String
    let nextUnreachable: String
    let shownOne, shownMany, resetDone: String
    /// An age as the pages say it: "{age} ago" (the age as `Age` writes it, "3 h"), and "just now".
    let ago, justNow: String

    init(_ language: Language) {
        let page = language.strings, device = language.device
        imageUnavailable = page.imageUnavailable
        loading = page.loading
        filtering = page.filtering
        filteringUnreachable = page.filteringUnreachable
        noMatches = page.noMatches
        loadFailed = page.loadFailed
        unreachable = device.unreachable
        slow = device.slow
        holds = device.holds
        savedAgo = device.savedAgo
        neverSaved = device.neverSaved
        saving = device.saving
        persisted = device.persisted
        notPersisted = device.notPersisted
        cleared = device.cleared
        pageOne = device.pageOne
        pageMany = device.pageMany
        pictureOne = device.pictureOne
        pictureMany = device.pictureMany
        pendingOne = device.pendingOne
        pendingMany = device.pendingMany
        pendingRefused = device.pendingRefused
        resetPending = device.resetPending
        pending = device.pending
        failedOne = device.failedOne
        failedMany = device.failedMany
        newVersion = device.newVersion
        reload = device.reload
        deleted = device.deleted
        undo = device.undo
        unstarred = device.unstarred
        deletedMany = device.deletedMany
        moved = device.moved
        unstarredMany = device.unstarredMany
        languageNeedsKiosk = device.languageNeedsKiosk
        historyNeedsKiosk = device.historyNeedsKiosk
        historyCleared = device.historyCleared
        unreachableLoaded = device.unreachableLoaded
        notSaved = device.notSaved
        nextUnreachable = device.nextUnreachable
        shownOne = device.shownOne
        shownMany = device.shownMany
        resetDone = device.resetDone
        ago = page.ago("{age}")
        justNow = page.justNow
    }
}

extension Language {
    /// The words of the pairing page, which a phone sees before anything else of Kiosk.
    var pairing: PairingStrings { self == .es ? .spanish : .english }
}

/// The words of `/pair`: what the code is, where to find it, and why an attempt failed.
struct PairingStrings: Sendable {
    let title, intro, codeLabel, codeHint, submit, fingerprintHint, wrongCode, burned, noOpenCode, alreadyPaired: String
    /// `/pair` where Kiosk serves this machine alone (no `--lan`): nothing to pair, and how to reach it from a phone.
    let notNeeded: String
    let attemptsLeft: @Sendable (Int) -> String
    let tooMany: @Sendable (Int) -> String

}
