import Foundation
import Hummingbird
import KioskCore

/// The languages of the web app. Upstream data stays in the language the API sends it in.
enum Language: String, CaseIterable, Sendable {
    case en
    case es

    /// The cookie that makes a choice made with the switch stick.
    static let cookieName = "kiosk_lang"

    /// The language's name in itself, as the switch shows it.
    var nativeName: String {
        switch self {
        case .en: "English"
        case .es: "Español"
        }
    }

    /// The locale used for dates and numbers.
    var locale: Locale { Locale(identifier: self == .es ? "es_ES" : "en_US") }

    /// The strings of this language (one shared instance each).
    var strings: Strings { self == .es ? .spanish : .english }

    /// The language for a request: the switch's cookie when valid, else the best Accept-Language match,
    /// else English.
    static func negotiate(cookie: String?, acceptLanguage: String?) -> Language {
        if let cookie, let chosen = Language(rawValue: cookie) { return chosen }
        return preferred(acceptLanguage) ?? .en
    }

    /// The highest-weighted supported language in an Accept-Language header ("es-ES,es;q=0.9,en;q=0.8");
    /// ties keep header order, q=0 means "not this one".
    static func preferred(_ header: String?) -> Language? {
        guard let header, header.utf8.count <= 1024 else { return nil }
        var best: (language: Language, weight: Double)?
        for entry in header.split(separator: ",") {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first?.lowercased(), !tag.isEmpty else { continue }
            let primary = String(tag.split(separator: "-").first ?? "")
            var weight = 1.0
            for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("q=") {
                weight = Double(parameter.dropFirst(2)) ?? 0
            }
            guard weight > 0, let language = Language(rawValue: primary) else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language
    }
}

/// Puts the request's language and path in its context, and marks responses as varying by the language.
struct LanguageMiddleware: RouterMiddleware {
    func handle(_ request: Request, context: WebRequestContext,
                next: (Request, WebRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        context.language = Language.negotiate(cookie: request.cookies[Language.cookieName]?.value,
                                              acceptLanguage: request.headers[.acceptLanguage])
        // The request target as sent ("/rickandmorty?page=2"); rebuilt only for the rare absolute form.
        let target = request.uri.string
        context.path = target.hasPrefix("/") ? target : request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        var response = try await next(request, context)
        // Only pages are in a language; pictures, scripts and JSON stay cacheable whatever the cookie.
        if response.headers[.contentType]?.hasPrefix("text/html") == true {
            let fields: [HTTPFields.Element]
            switch context.language {
            case .en: fields = Self.englishFields
            case .es: fields = Self.spanishFields
            }
            for field in fields { response.headers[fields: field.name] = [field] }
        }
        return response
    }

    // Vary and Content-Language, built (and their values checked) once per language.
    private static let englishFields = fields(.en)
    private static let spanishFields = fields(.es)

    private static func fields(_ language: Language) -> [HTTPFields.Element] {
        [HTTPFields.Element(name: .vary, value: "Accept-Language, Cookie"), HTTPFields.Element(name: .contentLanguage, value: language.rawValue)]
    }
}

/// Dates, numbers and ages in a language.
enum Localized {
    /// "Oct 21, 2025" / "21 oct 2025" for an ISO date ("2025-10-21" or a full timestamp); the input
    /// unchanged when it is not a date.
    static func date(_ iso: String, language: Language) -> String {
        guard let date = parseDate(iso) else { return iso }
        return date.formatted(Date.FormatStyle(date: .abbreviated, time: .omitted, locale: language.locale,
                                               timeZone: TimeZone(identifier: "UTC")!))
    }

    /// A whole number with the language's grouping ("1,234" / "1234" or "12.345").
    static func number(_ value: Int, language: Language) -> String {
        value.formatted(.number.locale(language.locale))
    }

    /// "3 h ago" / "hace 3 h".
    static func age(_ seconds: TimeInterval, language: Language) -> String {
        Age(seconds).compact.map(language.strings.ago) ?? language.strings.justNow
    }

    private static func parseDate(_ text: String) -> Date? {
        let day = String(text.prefix(10))
        let parts = day.split(separator: "-")
        guard parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]), let dayOfMonth = Int(parts[2]),
              (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = dayOfMonth
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: components)
    }
}


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
    let resetLabel: String
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
    let loadFailed: String
    let offlineSearching: String
    let inSavedData: String
    let backToCatalogs: String
    let justNow: String
    let ago: @Sendable (String) -> String
    let updated: @Sendable (String) -> String
    let offlineSince: @Sendable (String) -> String
    let offlineSaved: String
    let couldNotRefresh: @Sendable (String) -> String
    let couldNotSearch: @Sendable (String) -> String
    let results: @Sendable (Int, String) -> String
    let addFavorite: @Sendable (String) -> String
    let removeFavorite: @Sendable (String) -> String
    let moveUp: @Sendable (String) -> String
    let moveDown: @Sendable (String) -> String
    let deleteItem: @Sendable (String) -> String
    let almostYears: @Sendable (Int) -> String
    let filterName: @Sendable (String) -> String
    let filterValue: @Sendable (String, String) -> String
    let field: @Sendable (String) -> String
    let collection: @Sendable (String) -> String

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
         resetLabel: String,
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
         loadFailed: String,
         offlineSearching: String,
         inSavedData: String,
         backToCatalogs: String,
         justNow: String,
         ago: @escaping @Sendable (String) -> String,
         updated: @escaping @Sendable (String) -> String,
         offlineSince: @escaping @Sendable (String) -> String,
         offlineSaved: String,
         couldNotRefresh: @escaping @Sendable (String) -> String,
         couldNotSearch: @escaping @Sendable (String) -> String,
         results: @escaping @Sendable (Int, String) -> String,
         addFavorite: @escaping @Sendable (String) -> String,
         removeFavorite: @escaping @Sendable (String) -> String,
         moveUp: @escaping @Sendable (String) -> String,
         moveDown: @escaping @Sendable (String) -> String,
         deleteItem: @escaping @Sendable (String) -> String,
         almostYears: @escaping @Sendable (Int) -> String,
         filterName: @escaping @Sendable (String) -> String,
         filterValue: @escaping @Sendable (String, String) -> String,
         field: @escaping @Sendable (String) -> String,
         collection: @escaping @Sendable (String) -> String) {
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
        self.loadFailed = loadFailed
        self.offlineSearching = offlineSearching
        self.inSavedData = inSavedData
        self.backToCatalogs = backToCatalogs
        self.justNow = justNow
        self.ago = ago
        self.updated = updated
        self.offlineSince = offlineSince
        self.offlineSaved = offlineSaved
        self.couldNotRefresh = couldNotRefresh
        self.couldNotSearch = couldNotSearch
        self.results = results
        self.addFavorite = addFavorite
        self.removeFavorite = removeFavorite
        self.moveUp = moveUp
        self.moveDown = moveDown
        self.deleteItem = deleteItem
        self.almostYears = almostYears
        self.filterName = filterName
        self.filterValue = filterValue
        self.field = field
        self.collection = collection
    }

    static let english = Strings(
        home: "Home", favorites: "Favorites", catalogs: "Catalogs",
        tagline: "Offline-first reader: everything you have seen stays readable without a network.",
        skipToContent: "Skip to content", languageSwitch: "Language", search: "Search", go: "Go", any: "any",
        refresh: "Refresh", retry: "Retry", stale: "stale", refreshing: "refreshing…", nothingHere: "Nothing here.",
        noFavorites: "No favorites yet. Tap a star to keep an item here, readable offline.", noMatches: "No matches.",
        previous: "‹ Previous", next: "Next ›", pages: "Pages", edit: "Edit", done: "Done", reset: "Reset",
        resetLabel: "Reset the dogs list", delete: "Delete", details: "Details", selectItem: "Select an item to see it here.",
        favorite: "★ Favorite", keywords: "Keywords", readFullArticle: "Read the full article", none: "None",
        andMore: "and more", imageUnavailable: "Image unavailable", loading: "Loading…",
        filtering: "Filtering the items shown; type 3 characters or more to search.", loadFailed: "Could not load. Try again.",
        offlineSearching: "Offline — searching saved data only.", inSavedData: " in saved data",
        backToCatalogs: "Back to the catalogs", justNow: "just now",
        ago: { "\($0) ago" },
        updated: { "Updated \($0)" },
        offlineSince: { "Offline — showing saved data from \($0)" },
        offlineSaved: "Offline — showing saved data.",
        couldNotRefresh: { "Could not refresh: \($0)" },
        couldNotSearch: { "Could not search upstream: \($0)" },
        results: { count, query in "\(count) result\(count == 1 ? "" : "s") for “\(query)”" },
        addFavorite: { "Add \($0) to favorites" }, removeFavorite: { "Remove \($0) from favorites" },
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
        collection: { $0 }
    )

    static let spanish = Strings(
        home: "Inicio", favorites: "Favoritos", catalogs: "Catálogos",
        tagline: "Lector sin conexión: todo lo que has visto sigue disponible sin red.",
        skipToContent: "Saltar al contenido", languageSwitch: "Idioma", search: "Buscar", go: "Ir", any: "todos",
        refresh: "Actualizar", retry: "Reintentar", stale: "desactualizado", refreshing: "actualizando…",
        nothingHere: "No hay nada aquí.",
        noFavorites: "Aún no hay favoritos. Toca una estrella para guardar un elemento aquí, legible sin conexión.",
        noMatches: "Sin resultados.", previous: "‹ Anterior", next: "Siguiente ›", pages: "Páginas", edit: "Editar",
        done: "Listo", reset: "Restablecer", resetLabel: "Restablecer la lista de perros", delete: "Eliminar",
        details: "Detalles", selectItem: "Elige un elemento para verlo aquí.", favorite: "★ Favorito",
        keywords: "Palabras clave", readFullArticle: "Leer el artículo completo", none: "Ninguno", andMore: "y más",
        imageUnavailable: "Imagen no disponible", loading: "Cargando…",
        filtering: "Filtrando lo que se muestra; escribe 3 caracteres o más para buscar.",
        loadFailed: "No se pudo cargar. Inténtalo de nuevo.",
        offlineSearching: "Sin conexión: solo se buscan los datos guardados.", inSavedData: " en los datos guardados",
        backToCatalogs: "Volver a los catálogos", justNow: "ahora mismo",
        ago: { "hace \($0)" },
        updated: { "Actualizado \($0)" },
        offlineSince: { "Sin conexión: se muestran datos guardados de \($0)" },
        offlineSaved: "Sin conexión: se muestran los datos guardados.",
        couldNotRefresh: { "No se pudo actualizar: \($0)" },
        couldNotSearch: { "No se pudo buscar en el origen: \($0)" },
        results: { count, query in "\(count) resultado\(count == 1 ? "" : "s") para «\(query)»" },
        addFavorite: { "Añadir \($0) a favoritos" }, removeFavorite: { "Quitar \($0) de favoritos" },
        moveUp: { "Subir \($0)" }, moveDown: { "Bajar \($0)" }, deleteItem: { "Eliminar \($0)" },
        almostYears: { $0 == 1 ? "Casi 1 año" : "Casi \($0) años" },
        filterName: { name in
            switch name {
            case "kind": "Tipo"
            case "period": "Periodo"
            case "status": "Estado"
            case "gender": "Género"
            default: name.capitalized
            }
        },
        filterValue: { name, value in
            switch (name, value) {
            case ("kind", "emailed"): "Más enviados"
            case ("kind", "viewed"): "Más vistos"
            case ("kind", "shared"): "Más compartidos"
            case ("period", "1"): "Hoy"
            case ("period", _): "Últimos \(value) días"
            case ("status", "alive"): "Vivo"
            case ("status", "dead"): "Muerto"
            case ("status", "unknown"), ("gender", "unknown"): "Desconocido"
            case ("gender", "female"): "Femenino"
            case ("gender", "male"): "Masculino"
            case ("gender", "genderless"): "Sin género"
            default: value
            }
        },
        field: { name in
            switch name {
            case "Status": "Estado"
            case "Gender": "Género"
            case "Species": "Especie"
            case "Type": "Tipo"
            case "Origin": "Origen"
            case "Location": "Ubicación"
            case "Episodes": "Episodios"
            default: name
            }
        },
        collection: { name in
            switch name {
            case "Comics": "Cómics"
            case "Series": "Series"
            case "Stories": "Historias"
            case "Events": "Eventos"
            default: name
            }
        }
    )
}


extension Language {
    /// The words of linked items: Rick and Morty's episodes, places and residents.
    var linked: LinkedStrings { self == .es ? .spanish : .english }
}

/// The words of linked items: a character's episodes and places, a location's residents.
struct LinkedStrings: Sendable {
    let onThisPage, places, origin, lastLocation, episode, episodes, characters, residents, aired, dimension, unknown, notSaved: String
    let residentCount: @Sendable (String) -> String
    let missing, skipped: @Sendable (Int) -> String

    static let english = LinkedStrings(
        onThisPage: "On this page", places: "Places", origin: "Origin", lastLocation: "Last known location",
        episode: "Episode", episodes: "Episodes", characters: "Characters", residents: "Residents", aired: "Aired", dimension: "Dimension",
        unknown: "Unknown", notSaved: "not saved on this device yet",
        residentCount: { $0 == "1" ? "1 resident" : "\($0) residents" },
        missing: { $0 == 1 ? "1 linked item is not saved on this device and could not be fetched."
                   : "\($0) linked items are not saved on this device and could not be fetched." },
        skipped: { $0 == 1 ? "1 linked item could not be read and is left out." : "\($0) linked items could not be read and are left out." })

    static let spanish = LinkedStrings(
        onThisPage: "En esta página", places: "Lugares", origin: "Origen", lastLocation: "Última ubicación conocida",
        episode: "Episodio", episodes: "Episodios", characters: "Personajes", residents: "Residentes", aired: "Emitido", dimension: "Dimensión",
        unknown: "Desconocido", notSaved: "aún no guardado en este dispositivo",
        residentCount: { $0 == "1" ? "1 residente" : "\($0) residentes" },
        missing: { $0 == 1 ? "1 elemento enlazado no está guardado en este dispositivo y no se pudo obtener."
                   : "\($0) elementos enlazados no están guardados en este dispositivo y no se pudieron obtener." },
        skipped: { $0 == 1 ? "1 elemento enlazado no se pudo leer y se omite." : "\($0) elementos enlazados no se pudieron leer y se omiten." })
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
    /// What offline.js says (`{name}` marks a value it fills in).
    let unreachable, holds, savedAgo, neverSaved, saving, persisted, notPersisted, cleared: String
    let pendingOne, pendingMany, pending, failedOne, failedMany, newVersion, reload: String

    static let english = DeviceStrings(
        onThisDevice: "On this device", saveForOffline: "Save for offline",
        saveForOfflineHint: "While Kiosk is reachable, this device keeps page 1 of each catalog and your favorites, "
            + "with their details and pictures, to read when it is not.",
        storageLimit: "Space for saved pages", clear: "Clear saved pages",
        offlineTitle: "Not saved on this device",
        offlineMessage: "Kiosk is unreachable, and this page was not saved on this device. These pages were:",
        savedPages: "Saved on this device", noSavedPages: "Nothing is saved on this device yet.",
        unreachable: "Kiosk is unreachable — showing what this device saved {ago}",
        holds: "This device holds {size} of {limit}: {pages} pages and {images} pictures.",
        savedAgo: "Last saved for offline {ago}.", neverSaved: "Not saved for offline yet.",
        saving: "Saving for offline… {done} of {total}",
        persisted: "The browser keeps it until you clear it.",
        notPersisted: "The browser may clear it when the device runs low on space.",
        cleared: "Saved pages cleared.",
        pendingOne: "1 change is waiting to be sent to Kiosk.", pendingMany: "{n} changes are waiting to be sent to Kiosk.",
        pending: "waiting to be sent",
        failedOne: "1 change could not be applied: {reason}", failedMany: "{n} changes could not be applied: {reason}",
        newVersion: "A new version of Kiosk is ready.", reload: "Reload")

    static let spanish = DeviceStrings(
        onThisDevice: "En este dispositivo", saveForOffline: "Guardar para leer sin conexión",
        saveForOfflineHint: "Mientras Kiosk responde, este dispositivo guarda la página 1 de cada catálogo y tus favoritos, "
            + "con sus detalles e imágenes, para leerlos cuando no responda.",
        storageLimit: "Espacio para páginas guardadas", clear: "Borrar páginas guardadas",
        offlineTitle: "No guardada en este dispositivo",
        offlineMessage: "Kiosk no responde y esta página no se guardó en este dispositivo. Estas sí:",
        savedPages: "Guardado en este dispositivo", noSavedPages: "Todavía no hay nada guardado en este dispositivo.",
        unreachable: "Kiosk no responde: se muestra lo que este dispositivo guardó {ago}",
        holds: "Este dispositivo guarda {size} de {limit}: {pages} páginas y {images} imágenes.",
        savedAgo: "Guardado para leer sin conexión {ago}.", neverSaved: "Aún no se ha guardado nada para leer sin conexión.",
        saving: "Guardando para leer sin conexión… {done} de {total}",
        persisted: "El navegador lo conserva hasta que lo borres.",
        notPersisted: "El navegador puede borrarlo si el dispositivo se queda sin espacio.",
        cleared: "Páginas guardadas borradas.",
        pendingOne: "1 cambio está pendiente de enviarse a Kiosk.", pendingMany: "{n} cambios están pendientes de enviarse a Kiosk.",
        pending: "pendiente de enviarse",
        failedOne: "1 cambio no se pudo aplicar: {reason}", failedMany: "{n} cambios no se pudieron aplicar: {reason}",
        newVersion: "Hay una nueva versión de Kiosk.", reload: "Recargar")
}

/// Every word the scripts show, for one language, as JSON in `<body data-strings>`: a field each, built from the
/// page's own typed strings, so a word missing in a language is a compile error here as it is in a page.
struct ScriptStrings: Encodable, Sendable {
    let imageUnavailable, loading, filtering, loadFailed: String
    let unreachable, holds, savedAgo, neverSaved, saving, persisted, notPersisted, cleared: String
    let pendingOne, pendingMany, pending, failedOne, failedMany, newVersion, reload: String
    /// An age as the pages say it: "{age} ago" (the age as `Age` writes it, "3 h"), and "just now".
    let ago, justNow: String

    init(_ language: Language) {
        let page = language.strings, device = language.device
        imageUnavailable = page.imageUnavailable
        loading = page.loading
        filtering = page.filtering
        loadFailed = page.loadFailed
        unreachable = device.unreachable
        holds = device.holds
        savedAgo = device.savedAgo
        neverSaved = device.neverSaved
        saving = device.saving
        persisted = device.persisted
        notPersisted = device.notPersisted
        cleared = device.cleared
        pendingOne = device.pendingOne
        pendingMany = device.pendingMany
        pending = device.pending
        failedOne = device.failedOne
        failedMany = device.failedMany
        newVersion = device.newVersion
        reload = device.reload
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
    let attemptsLeft: @Sendable (Int) -> String
    let tooMany: @Sendable (Int) -> String

    static let english = PairingStrings(
        title: "Pair this device",
        intro: "Kiosk is running on another computer of your network. To read it here, enter the pairing code that "
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
        attemptsLeft: { $0 == 1 ? "1 more try this minute." : "\($0) more tries this minute." },
        tooMany: { "Too many wrong codes were tried. Try again in \($0) s." })

    static let spanish = PairingStrings(
        title: "Vincular este dispositivo",
        intro: "Kiosk se está ejecutando en otro ordenador de tu red. Para leerlo aquí, escribe el código de vinculación "
            + "que muestra kiosk serve --lan en su terminal, o el que muestra allí kiosk devices pair. Solo hace falta una vez "
            + "por navegador.",
        codeLabel: "Código de vinculación", codeHint: "8 cifras, como 1234-5678", submit: "Vincular",
        fingerprintHint: "Antes de escribirlo, comprueba que la huella del certificado que muestra tu navegador coincide con "
            + "la de esa terminal.",
        wrongCode: "Ese no es el código de vinculación. Mira la terminal donde lo pediste.",
        burned: "Se han probado demasiados códigos incorrectos, así que ese código ya no sirve: ejecuta kiosk devices pair en el "
            + "ordenador donde se ejecuta Kiosk para obtener otro.",
        noOpenCode: "No hay ningún código de vinculación abierto: un código sirve una vez, durante 10 minutos. Ejecuta kiosk "
            + "devices pair en el ordenador donde se ejecuta Kiosk y escribe el código que muestra.",
        alreadyPaired: "Este navegador ya está vinculado: vincularlo de nuevo no sustituye nada y añade otro dispositivo.",
        attemptsLeft: { $0 == 1 ? "Te queda 1 intento este minuto." : "Te quedan \($0) intentos este minuto." },
        tooMany: { "Se han probado demasiados códigos incorrectos. Vuelve a intentarlo en \($0) s." })
}
