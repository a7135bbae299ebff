// The web app's words in Spanish: one value per strings type (Strings.swift).

import Foundation
import KioskCore

extension Strings {
    /// The Spanish words.
    static let spanish = Strings(
        home: "Inicio", favorites: "Favoritos", catalogs: "Catálogos",
        tagline: "Lector sin conexión: todo lo que has visto sigue disponible sin red.",
        skipToContent: "Saltar al contenido", languageSwitch: "Idioma", search: "Buscar", go: "Ir", any: "Todos",
        refresh: "Actualizar", retry: "Reintentar", stale: "desactualizado", refreshing: "actualizando…",
        nothingHere: "No hay nada aquí.",
        noFavorites: "Aún no hay favoritos. Toca una estrella para guardar un elemento aquí, legible sin conexión.",
        noMatches: "Sin resultados.", previous: "‹ Anterior", next: "Siguiente ›", pages: "Páginas", edit: "Editar",
        done: "Listo", reset: "Restablecer", resetLabel: { "Restablecer la lista de \($0)" },
        errorTitle: { status in
            switch status {
            case 400: "Solicitud no válida"
            case 403: "Prohibido"
            case 404: "No encontrado"
            case 405: "Método no permitido"
            case 429: "Demasiados intentos"
            case 502: "Error del servidor de origen"
            case 503: "Sin conexión"
            case 504: "Sin respuesta a tiempo"
            case 507: "No queda espacio en el disco"
            default: "Algo salió mal"
            }
        }, delete: "Eliminar",
        details: "Detalles", selectItem: "Elige un elemento para verlo aquí.", favorite: "Favorito",
        keywords: "Palabras clave", readFullArticle: "Leer el artículo completo", none: "Ninguno", andMore: "y más",
        imageUnavailable: "Imagen no disponible", loading: "Cargando…",
        filtering: "Filtrando lo que se muestra; escribe 3 caracteres o más para buscar.",
        filteringUnreachable: "Kiosk no responde: filtrando lo que se muestra; para buscar hace falta Kiosk.",
        loadFailed: "No se pudo cargar. Inténtalo de nuevo.",
        offlineSearching: "Sin conexión: solo se buscan los datos guardados.", inSavedData: " en los datos guardados",
        moreMatch: "; hay más: añade una palabra para acotarlos.",
        backToCatalogs: "Volver a los catálogos", justNow: "ahora mismo",
        ago: { "hace \($0)" },
        updated: { "Actualizado \($0)" },
        offlineSince: { "Sin conexión: se muestran datos guardados de \($0)" },
        offlineSaved: "Sin conexión: se muestran los datos guardados.",
        couldNotRefresh: { "No se pudo actualizar: \($0)" },
        upstreamProblem: spanishUpstreamProblem,
        couldNotLoad: { "No se pudo cargar esta página: \($0)" },
        couldNotSave: { "No se pudo guardar este cambio: \($0)" },
        couldNotSearch: { "No se pudo buscar en el catálogo: \($0)" },
        results: { count, query in "\(count) resultado\(count == 1 ? "" : "s") para «\(query)»" },
        favoriteOf: { "Favorito: \($0)" },
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
        },
        resetWarning: { "¿Olvidar todas las eliminaciones y tu orden de la lista de \($0), y mostrarla como la envía el catálogo?" },
        cannotMove: { "\($0) no se pudo mover a la posición \($1): la lista cambió desde que se mostró esta página. Se muestra como está ahora." },
        notInList: { "\($0) ya no está en la lista: se eliminó en otro sitio. La lista se muestra como está ahora." },
        offlineNotSaved: "No se puede contactar con el catálogo ahora mismo y Kiosk aún no ha guardado esta página.",
        timedOutNotSaved: "El catálogo tarda demasiado en responder y Kiosk aún no ha guardado esta página.",
        itemNotFound: "Este catálogo no tiene nada en esta dirección: puede que el elemento se haya quitado o que el enlace esté mal.",
        noSuchItemID: "Ningún elemento de este catálogo puede tener esta dirección: el enlace está mal.",
        noLinkedPage: { "Este elemento no tiene página \($0) de elementos enlazados." },
        formTokenStale: "Falta el código de seguridad del formulario o está caducado. Vuelve a cargar la página e inténtalo de nuevo.",
        pageNotFound: "No hay ninguna página en esta dirección.",
        noSuchCatalog: { "No hay ningún catálogo llamado «\($0)»." },
        pastTheLastPage: { name, total in "\(name) tiene \(total) página\(total == 1 ? "" : "s")." },
        goToLastPage: { "Ir a la última (página \($0))" },
        noSuchPage: { name, page in "\(name) no tiene página \(page)." },
        goToFirstPage: "Ir a la primera página",
        badListAddress: { problem in
            switch problem {
            case .unknownParameter(let name): "Esta página no tiene ningún ajuste llamado «\(name)»: puede que la dirección esté mal escrita."
            case .pageBelowOne: "Las páginas empiezan en la 1."
            case .pageNotANumber: "La página debe ser un número entero."
            case .switchValue(let name): "«\(name)» admite 1 (sí) o 0 (no)."
            case .searchTooLong(let limit): "El texto de búsqueda puede tener como mucho \(limit) caracteres."
            case .filterValueTooLong(let name): "El valor pedido para \(name) es demasiado largo."
            case let .invalidFilterValue(name, value, offered):
                "\(name) no puede ser «\(value)» aquí; elige entre: \(offered.joined(separator: ", "))."
            }
        },
        skippedItems: { $0 == 1 ? "1 elemento de esta página llegó ilegible del catálogo y se omite."
                                  : "\($0) elementos de esta página llegaron ilegibles del catálogo y se omiten." },
        species: { species in
            switch species.lowercased() {
            case "human": "Humano"
            case "alien": "Alienígena"
            case "humanoid": "Humanoide"
            case "robot": "Robot"
            case "animal": "Animal"
            case "mythological creature": "Criatura mitológica"
            case "disease": "Enfermedad"
            case "cronenberg": "Cronenberg"
            case "poopybutthole": "Poopybutthole"
            case "unknown": "Desconocida"
            default: species
            }
        },
        ofFemaleCharacter: { word in
            switch word {
            case "Vivo": "Viva"
            case "Muerto": "Muerta"
            case "Humano": "Humana"
            // "Desconocido" stays: it is the status that is unknown, not the character; the other species do not inflect.
            default: word
            }
        },
        noneInCollection: { name in name == "Series" || name == "Stories" ? "Ninguna" : "Ninguno" },
        marvelCounts: { comics, series in
            let count = { Localized.number($0, language: .es) }
            let parts = [comics == 0 ? nil : comics == 1 ? "1 cómic" : "\(count(comics)) cómics",
                         series == 0 ? nil : series == 1 ? "1 serie" : "\(count(series)) series"]
            return parts.contains { $0 != nil } ? parts.compactMap { $0 }.joined(separator: " · ") : "Sin cómics"
        }
    )
}

extension LinkedStrings {
    /// The Spanish words.
    static let spanish = LinkedStrings(
        onThisPage: "En esta página", places: "Lugares", origin: "Origen", lastLocation: "Última ubicación conocida",
        episode: "Episodio", episodes: "Episodios", characters: "Personajes", residents: "Residentes", aired: "Emisión", dimension: "Dimensión",
        unknown: "Desconocido", unknownDimension: "Desconocida", notSaved: "aún no guardado en este dispositivo",
        residentCount: { $0 == "1" ? "1 residente" : "\($0) residentes" },
        missing: { $0 == 1 ? "1 elemento enlazado no está en el almacén de Kiosk y no se pudo obtener del catálogo."
                   : "\($0) elementos enlazados no están en el almacén de Kiosk y no se pudieron obtener del catálogo." },
        skipped: { $0 == 1 ? "1 elemento enlazado no se pudo leer y se omite." : "\($0) elementos enlazados no se pudieron leer y se omiten." })
}

extension DeviceStrings {
    /// The Spanish words.
    static let spanish = DeviceStrings(
        onThisDevice: "En este dispositivo", saveForOffline: "Guardar para leer sin conexión",
        saveForOfflineHint: "Mientras Kiosk responde, este dispositivo guarda la página 1 de cada catálogo y tus favoritos, "
            + "con sus detalles e imágenes, para leerlos cuando no responda.",
        storageLimit: "Espacio para páginas guardadas", clear: "Borrar páginas guardadas",
        offlineTitle: "Página no guardada en este dispositivo",
        offlineMessage: "Kiosk no responde y esta página no se guardó en este dispositivo. Estas sí:",
        savedPages: "Páginas guardadas en este dispositivo", noSavedPages: "Todavía no hay nada guardado en este dispositivo.",
        otherSavedPages: "Otras páginas",
        unreachable: "Kiosk no responde: se muestra lo que este dispositivo guardó {ago}",
        slow: "Kiosk tarda demasiado en responder: se muestra lo que este dispositivo guardó {ago}",
        holds: "Este dispositivo guarda {size} de {limit}: {pages} y {images}.",
        savedAgo: "Guardado para leer sin conexión {ago}.", neverSaved: "Las páginas se guardan al leerlas; el guardado completo para leer sin conexión aún no se ha hecho.",
        saving: "Guardando para leer sin conexión… {done} de {total}",
        persisted: "El navegador lo conserva hasta que lo borres.",
        notPersisted: "El navegador puede borrarlo si el dispositivo se queda sin espacio.",
        cleared: "Páginas guardadas borradas.",
        pageOne: "1 página", pageMany: "{n} páginas", pictureOne: "1 imagen", pictureMany: "{n} imágenes",
        pendingOne: "1 cambio está pendiente de enviarse a Kiosk.", pendingMany: "{n} cambios están pendientes de enviarse a Kiosk.",
        pending: "pendiente de enviarse",
        failedOne: "1 cambio no se pudo aplicar: {reason}", failedMany: "{n} cambios no se pudieron aplicar: {reason}",
        newVersion: "Hay una nueva versión de Kiosk.", reload: "Recargar",
        pendingRefused: "Kiosk aún no pudo aceptarlo ({reason}); se volverá a enviar solo.",
        resetPending: "El restablecimiento está pendiente de enviarse: la lista volverá a su orden original cuando Kiosk responda.",
        deleted: "Se eliminó {title}.", undo: "Deshacer", unstarred: "Se quitó {title} de favoritos.",
        deletedMany: "Se eliminaron {titles}.", unstarredMany: "Se quitaron {titles} de favoritos.",
        moved: "{title}: posición {n} de {total}.",
        languageNeedsKiosk: "Kiosk no responde: el idioma se podrá cambiar cuando responda.",
        historyNeedsKiosk: "Kiosk no responde: el historial de lectura se podrá borrar cuando responda.",
        historyCleared: "Historial de lectura borrado.",
        unreachableLoaded: "Kiosk no responde: esta página es tal como se cargó {ago}",
        notSaved: "No guardado en este dispositivo",
        nextUnreachable: "Kiosk no responde: la página siguiente se podrá cargar cuando responda.",
        shownOne: "1 elemento mostrado.", shownMany: "{n} elementos mostrados.",
        resetDone: "La lista volvió a su orden original.")
}

extension PairingStrings {
    /// The Spanish words.
    static let spanish = PairingStrings(
        title: "Vincular este dispositivo",
        intro: "Kiosk atiende a los navegadores de tu red una vez vinculados. Para leerlo aquí, escribe el código de vinculación "
            + "que muestra kiosk serve --lan en su terminal, o el que muestra allí kiosk devices pair. Solo hace falta una vez "
            + "por navegador.",
        codeLabel: "Código de vinculación", codeHint: "8 cifras, como 1234-5678", submit: "Vincular",
        fingerprintHint: "Antes de escribirlo, comprueba que la huella del certificado que muestra tu navegador coincide con "
            + "la de esa terminal.",
        wrongCode: "Ese no es el código de vinculación. Mira la terminal donde lo pediste.",
        burned: "Se han probado demasiados códigos incorrectos, así que ese código ya no sirve: ejecuta kiosk devices pair en el "
            + "ordenador donde se ejecuta Kiosk para obtener otro.",
        noOpenCode: "No hay ningún código de vinculación abierto: un código sirve una vez, durante 10 minutos. Ejecuta "
            + "kiosk devices pair en el ordenador donde se ejecuta Kiosk y escribe el código que muestra.",
        alreadyPaired: "Este navegador ya está vinculado: vincularlo de nuevo no sustituye nada y añade otro dispositivo.",
        notNeeded: "Este Kiosk solo responde a este ordenador, cuyos navegadores no necesitan vincularse. Para leerlo en un "
            + "teléfono u otro ordenador de la misma red, inícialo con kiosk serve --lan: muestra la dirección que hay que abrir "
            + "allí, y ese dispositivo pide un código, que muestra kiosk devices pair.",
        attemptsLeft: { $0 == 1 ? "Te queda 1 intento este minuto." : "Te quedan \($0) intentos este minuto." },
        tooMany: { "Se han probado demasiados códigos incorrectos. Vuelve a intentarlo en \($0) s." })
}

/// What went wrong with the catalog, in Spanish (`Strings.upstreamProblem`).
private func spanishUpstreamProblem(_ error: KioskError) -> String {
    switch error {
    case .httpStatus(let status, _) where status >= 500: "el catálogo tuvo un error de servidor (HTTP \(status))."
    case .httpStatus(let status, _): "el catálogo respondió HTTP \(status)."
    case .rateLimited(_, let seconds): "el catálogo pide a Kiosk que espere" + (seconds.map { " \($0) s." } ?? ".")
    case .unauthorized: "el catálogo no aceptó la clave de Kiosk."
    case .malformedResponse: "la respuesta del catálogo no se pudo leer."
    case .truncatedBody: "la respuesta del catálogo llegó cortada."
    case .timeout: "el catálogo tardó demasiado en responder."
    case .stalledBody: "la respuesta del catálogo dejó de llegar a medias."
    case .offline: "no se puede llegar al catálogo."
    case .transport: "falló la conexión con el catálogo."
    case .unreadableAnswer(_, .larger(let limit)):
        "la respuesta del catálogo ocupa más de \(KioskError.AnswerProblem.size(limit)), más de lo que Kiosk lee."
    case .unreadableAnswer(_, .expandsTooMuch(let ratio)):
        "la respuesta del catálogo se descomprime a más de \(ratio) veces su tamaño, como una bomba de descompresión, así que Kiosk la rechazó."
    case .unreadableAnswer(_, .corruptCoding): "la respuesta del catálogo está comprimida de un modo que no se puede descomprimir."
    case .refused: "las reglas de Kiosk para las solicitudes salientes rechazaron la dirección."
    case .storage where error.isDiskFull: "el disco está lleno."
    case .storage: "Kiosk no pudo guardar la respuesta."
    case .notFound: "el catálogo ya no lo tiene."
    case .cancelled: "se canceló la solicitud."
    case .invalidRequest(let message): message
    }
}

extension RefusalStrings {
    static let spanish = RefusalStrings(
        noSuchFile: { "Aquí no hay ningún archivo llamado «\($0)»; recarga la página para obtener los actuales." },
        badPictureAddress: "El parámetro url debe ser una URL http(s) absoluta.",
        pictureAddressRequired: "El parámetro url es obligatorio.",
        picturesNotServed: { host in host.map { "No se sirven imágenes de \($0)." } ?? "No se sirven imágenes de ese servidor." },
        givenTwice: { "El parámetro «\($0)» aparece dos veces." },
        badPercentEncoding: "La consulta de la dirección no está bien codificada con «%».",
        controlCharacters: "La consulta de la dirección contiene caracteres de control.",
        queryTooLong: { "La consulta de la dirección tiene más de \($0) caracteres." },
        malformedNear: { "La consulta de la dirección está mal formada cerca de «\($0)»." },
        notPlainValues: "La consulta de la dirección está mal formada: cada parámetro lleva un solo valor simple.",
        fromAnotherSite: { origin in "Este formulario se envió desde otro sitio\(origin.map { " (\($0))" } ?? ""), así que se rechazó." },
        notForOtherSites: "Las páginas, imágenes y API de Kiosk responden a las propias páginas de Kiosk y a los enlaces que se siguen desde otros sitios.",
        noFormHere: "No hay ningún formulario en esta dirección.",
        tooLarge: { limit in "Lo enviado ocupa más de lo que acepta esta dirección\(limit.map { " (como mucho \($0))" } ?? "")." },
        unknownLanguage: { "El idioma debe ser uno de: \($0)." })
}
