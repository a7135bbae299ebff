import Foundation
import KioskCore
import KioskDebugger

// The console in Spanish.
extension ConsoleWords {
    static let spanish = ConsoleWords(
        networkDebugger: "Depurador de red",
        debugger: "Depurador",
        live: "En directo · ",
        reconnecting: "Reconectando… · ",
        notLive: "Sin directo: recarga la página · ",
        requestsLogged: { "\($0) solicitud\($0 == 1 ? "" : "es") registrada\($0 == 1 ? "" : "s")" },
        logNotes: " · con secretos ocultos al capturar · las más recientes primero · ",
        exportHAR: "Exportar HAR",
        insights: "Estadísticas",
        mockRules: "Reglas de simulación",
        rewriteRules: "Reglas de reescritura",
        endpoints: "Endpoints",
        nothingLogged: "Aún no hay nada registrado: las solicitudes aparecen aquí según se hacen, al abrir un catálogo o cuando una app envía una a través de kiosk proxy.",
        noRequestMatches: "Ninguna solicitud coincide.",
        olderRequests: "Solicitudes anteriores ›",
        pausedCount: { "\($0) solicitud\($0 == 1 ? " está detenida" : "es están detenidas") en un punto de interrupción. " },
        proxyIsOffline: "El proxy está sin conexión: no pregunta a ningún origen y responde a las apps desde su caché o con un 504. ",
        decide: "Decidir",
        any: "cualquiera",
        source: "Fuente",
        status: "Estado",
        httpProtocol: "Protocolo",
        cacheDecision: "Decisión de caché",
        slowerThan: "Más lenta que (ms)",
        filter: "Filtrar",
        noResponse: "sin respuesta",
        requests: "Solicitudes",
        cache: "Caché",
        duration: "Duración",
        waterfall: "Cascada",
        request: "Solicitud",
        queued: "en cola",
        connect: "conexión",
        firstByte: "primer byte",
        download: "descarga",
        total: "total",
        store: "almacén",
        allRequests: "‹ Todas las solicitudes",
        started: "Comienzo",
        error: "Error",
        queuedFact: "En cola",
        connectFact: "Conexión",
        dnsFact: "de ella, consulta DNS",
        tlsFact: "de ella, negociación TLS",
        timeToFirstByte: "Tiempo hasta el primer byte",
        downloadFact: "Descarga",
        totalFact: "Total",
        mockThisResponseLabel: "Simular esta respuesta: responder a esta solicitud con ella a partir de ahora (una regla de simulación)",
        mockThisResponse: "Simular esta respuesta",
        asCurl: "Como cURL (sin secretos)",
        requestHeaders: "Cabeceras de la solicitud",
        responseHeaders: "Cabeceras de la respuesta",
        requestBody: "Cuerpo de la solicitud",
        responseBody: "Cuerpo de la respuesta",
        none: "Ninguna",
        bytes: { $0 == 1 ? "1 byte" : "\($0.formatted(.number.locale(Locale(identifier: "es_ES")))) bytes" }, decimalSeparator: ",",
        truncatedTo: { ", recortado a \($0) al capturar" },
        shownFirst: { "; aquí se muestran los primeros \($0) (la respuesta se guarda y se reproduce entera)" },
        decodedFrom: { " descomprimidos de \($0) (\($1 == 1 ? "1 byte" : "\($1) bytes") tal como se enviaron)" },
        decodedShownFirst: { "; aquí se muestran sus primeros \($0) bytes" },
        withheld: { coding in
            coding.map { ", no se guardó: viene comprimido en \($0) y no se pudo guardar entero con sus secretos ocultos (recortado por el límite de captura, dañado, o brotli con un secreto)" }
                ?? ", no se guardó (el límite de captura es 0)"
        },
        treeCut: "El árbol se corta aquí; sigue el texto completo.",
        binary: "(binario, base64) ",
        requestTitle: { "Solicitud n.º \($0)" },
        pausedRequests: "Solicitudes detenidas",
        pausedIntro: "Solicitudes retenidas en un punto de interrupción. Cada una continúa sin cambios por sí sola cuando se le acaba el tiempo. ",
        switchesOnEndpoints: "Los interruptores están en la página de endpoints.",
        nothingPaused: "No hay nada detenido.",
        pausedAt: { phase in switch phase { case .request: "detenida en la solicitud"
            case .response: "detenida en la respuesta"
            case .error: "detenida en el error" } },
        continuesIn: { "continúa por sí sola en \($0) s" },
        appGoneAbortsIn: { "su app se ha ido: si nadie decide, se aborta en \($0) s (Enviar sin cambios aún la envía)" },
        backToPaused: "‹ Solicitudes detenidas",
        notSent: { "No se envió: \($0)" },
        requestFailed: { "La solicitud falló: \($0)" },
        pausedAppClosed: "La app cerró su lado de la conexión mientras esto esperaba: puede que se haya rendido y no lea lo que envíes. Si nadie decide, se aborta al agotarse su tiempo, sin enviarse.",
        queryEditor: "Parámetros de la consulta (nombre=valor por línea; <redacted> conserva el secreto)",
        headersEditor: "Cabeceras (Nombre: valor por línea; <redacted> conserva el secreto)",
        methodEditor: "Método",
        pathEditor: "Ruta",
        responseHeadersEditor: "Cabeceras de la respuesta (Nombre: valor por línea; <redacted> conserva el secreto)",
        badMethod: "El método no es un método HTTP: solo letras, dígitos y !#$%&'*+-.^_`|~.",
        badPath: "La ruta empieza por / y escribe como %XX todo carácter que no sea letra, dígito o -._~!$&'()*+,;=:@/.",
        headerLineWithoutColon: { "Cada cabecera es una línea «Nombre: valor» (se recibió «\($0)»)." },
        queryLineWithoutName: { "Cada parámetro de la consulta es una línea «nombre=valor» con nombre (se recibió «\($0)»)." },
        badHeaderName: { "«\($0)» no es un nombre de cabecera: solo letras, dígitos y !#$%&'*+-.^_`|~." },
        badHeaderValue: { "El valor de \($0) tiene un carácter de control (el valor de una cabecera es una sola línea de texto)." },
        headerHoldsRedacted: { "No se envió: \($0) aún contiene <redacted> en un valor que cambiaste, que iría tal cual. "
            + "Escribe el valor, o deja la línea como se mostró para conservar el secreto." },
        requestBodyEditor: "Cuerpo",
        requestBodyHoldsRedacted: "No se envió: un valor que cambiaste en el cuerpo aún contiene <redacted> donde Kiosk ocultó un "
            + "secreto, que iría al origen tal cual. Escribe el valor, o déjalo como se mostró para conservar el secreto.",
        answerBodyHoldsRedacted: "No se envió: un valor que cambiaste en el cuerpo aún contiene <redacted> donde Kiosk ocultó un "
            + "secreto que tu app envió, que le llegaría tal cual. Escribe el valor, o déjalo como se mostró para conservarlo.",
        sendEdited: "Enviar la solicitud editada",
        sendUnchanged: "Enviar sin cambios",
        abort: "Abortar",
        statusMustBeNumber: "El estado debe ser un número del 200 al 599 (un 1xx no es una respuesta).",
        statusCarriesNoBody: { "Una respuesta \($0) no lleva cuerpo, así que la app nunca vería este\($0 == 304 ? " (se queda con la copia que tiene)" : ""): responde con 200 para enviarlo." },
        answerInsteadEditor: "Una respuesta con la que contestar en su lugar (JSON)",
        responseEditor: "Cuerpo de la respuesta (JSON, editable)",
        responseTextEditor: "Cuerpo de la respuesta (texto, editable)",
        shownDecodedForEditing: { coding, size in
            "La respuesta llegó comprimida (\(coding), \(size)) y se muestra descomprimida. Editada, se envía sin comprimir, sin "
                + "Content-Encoding; enviada sin cambios, va tal como llegó."
        },
        bodyNotEditable: { size, reason in
            switch reason {
            case .coded(let coding): "El cuerpo (\(size)) está comprimido (\(coding)) de un modo que Kiosk no pudo descomprimir (dañado, "
                + "una codificación que no conoce, o más de 64 MB descomprimido): aquí se puede enviar sin cambios o abortar, no editar."
            case .binary: "El cuerpo (\(size)) no es texto: aquí se puede enviar sin cambios o abortar, no editar."
            case .tooLarge(let limit): "El cuerpo (\(size)) es demasiado grande para editarlo aquí (como mucho \(limit)): se puede enviar "
                + "sin cambios o abortar, y una regla de reescritura puede cambiarlo."
            }
        },
        keepReturning: "Seguir devolviendo esto: crear también una regla de reescritura que conteste a esta solicitud con este estado y este cuerpo a partir de ahora (un valor mostrado como <redacted> sigue así en la regla, a la que no llega ningún secreto)",
        keepAnswering: "Seguir devolviendo esto: crear también una regla de simulación que conteste a esta solicitud con este estado y este cuerpo a partir de ahora, sin preguntar al servidor (un valor mostrado como <redacted> sigue así en la regla, a la que no llega ningún secreto)",
        answerWithThis: "Contestar con esta respuesta",
        checkAndSend: "Comprobar y enviar la edición",
        failWithError: "Fallar con el error",
        requestEditNote: "La solicitud va a su servidor tal como se edite aquí, marcada en el registro. Sin una decisión, va sin cambios a las ",
        editNote: "Una respuesta editada se muestra a la aplicación, se marca como editada en el registro y nunca se guarda. Sin una decisión, la solicitud continúa sin cambios a las ",
        appGoneNote: "Su app se ha ido, así que sin una decisión el intercambio se aborta, sin enviarse, a las ",
        pausedTitle: { "Detenida n.º \($0)" },
        anyConfiguredSource: "cualquier fuente configurada",
        contentType: "Tipo de contenido",
        response: "Respuesta",
        requestsOf: { "Solicitudes de \($0)" },
        pictures: "imágenes",
        endpointsIntro: "Cada endpoint remoto al que Kiosk llama, tal como está configurado ahora. Los secretos se leen <redacted>.",
        appHosts: "Servidores de las apps a través de kiosk proxy",
        appHostsIntro: "Cada servidor al que una app llegó a través de kiosk proxy, según el registro. Sus puntos de interrupción pausan "
            + "cada intercambio con él.",
        exchangesLogged: { $0 == 1 ? "1 intercambio registrado" : "\($0) intercambios registrados" },
        catalogEndpoints: "Los catálogos de Kiosk",
        fromRequest: { "de la solicitud n.º \($0)" },
        fromBreakpointEdit: { "de una edición en un punto de interrupción de la detenida n.º \($0)" },
        addedInConsole: "añadida en la consola",
        addedByHand: "añadida a mano",
        addedThroughAPI: "añadida con la API JSON",
        pathsSeen: "Sus rutas, la más reciente primero. Los puntos de interrupción de una ruta valen para cualquier consulta "
            + "de ella, y por encima de los del servidor.",
        morePaths: { $0 == 1 ? "Y 1 ruta más, anterior." : "Y \($0) rutas más, anteriores." },
        urlPatterns: "Patrones de URL",
        urlPatternsIntro: "Puntos de interrupción en patrones de URL que ninguna ruta de arriba muestra, tal como los pone "
            + "kiosk breakpoint set (http://localhost:3000/api/*: * coincide con cualquier cosa; la consulta solo se compara "
            + "cuando el patrón tiene una).",
        breakpointOnRequest: "Punto de interrupción en la solicitud",
        onResponse: "en la respuesta",
        onError: "en un error",
        breakpointMode: { mode in switch mode { case .pause: "detener"
            case .ignore: "ignorar" } },
        saveBreakpoints: { "Guardar los puntos de interrupción de \($0)" },
        save: "Guardar",
        mocksIntroBefore: "Las solicitudes que coinciden las contesta la regla, sin el servidor remoto, y se registran como simuladas. Importa un archivo con ",
        mocksIntroAfter: ", o abre una solicitud registrada y elige Simular esta respuesta.",
        noMockRules: "No hay reglas de simulación.",
        editMockTitle: { "Regla de simulación n.º \($0)" },
        backToMocks: "‹ Reglas de simulación",
        mockAnswer: "La respuesta que da",
        mockStatusHint: "De 200 a 599.",
        mockHeadersHint: "«Nombre: valor» por línea, enviadas tal cual (la longitud y la delimitación del cuerpo son cosa del proxy).",
        mockBodyHint: "Se envía tal como se escribe, en UTF-8 (el JSON que llegó en una línea se queda en una línea).",
        mockBinaryBody: { "El cuerpo (\($0)) no es texto: se queda como está; el estado y las cabeceras se pueden cambiar." },
        saveMock: "Guardar la respuesta",
        on: "activa",
        off: "inactiva",
        enable: "Activar",
        disable: "Desactivar",
        delete: "Eliminar",
        enableRule: { "Activar la regla \($0)" },
        disableRule: { "Desactivar la regla \($0)" },
        deleteRule: { "Eliminar la regla \($0)" },
        state: "Activación",
        hits: "Usos",
        actions: "Acciones",
        debugToken: "Token de depuración",
        openDebugger: "Abrir el depurador",
        debuggerLocked: "Depurador bloqueado",
        captureOff: "La captura está desactivada",
        logUnavailable: "No se puede abrir el registro de solicitudes",
        filterLabel: "Filtro: términos clave:valor y palabras para buscar en URL y cuerpos",
        filterNotUnderstood: { "No se entiende el filtro: \($0). " },
        filterProblem: { reason in
            let keys = FilterKey.allCases.map(\.rawValue).joined(separator: ", ")
            return switch reason {
            case .unclosedQuote: "estas comillas no se cierran"
            case .textAfterQuote: "tras unas comillas de cierre debe ir un espacio"
            case .quoteInWord: "unas comillas solo pueden empezar una palabra"
            case .negatedWord(let term): "solo se pueden negar términos clave:valor; para buscar la palabra, ponla entre comillas: \"\(term)\""
            case .unknownKey(let key, let term):
                (key.isEmpty ? "falta una clave antes de los dos puntos" : "no existe la clave «\(key)»")
                    + "; las claves son \(keys) (para buscar el texto, ponlo entre comillas: \"\(term)\")"
            case .missingValue(let key): "\(key.rawValue) necesita un valor, como \(key.example)"
            case .emptyValue(let key): "\(key.rawValue) tiene un valor vacío entre comas; " + ConsoleWords.spanishAccepted(key)
            case .oneValueOnly(let key): "\(key.rawValue) admite un solo valor; repite la clave para otro: \(key.example) \(key.secondExample)"
            case .invalidValue(let key): ConsoleWords.spanishAccepted(key)
            case .givenTwice(_, let has?): "has:\(has) aparece dos veces"
            case .givenTwice(let key, nil): "\(key.rawValue) aparece dos veces; pon sus valores separados por comas en un solo término, como status:4xx,5xx"
            }
        },
        filterApplied: "Filtro aplicado: ",
        filterKeys: "Claves del filtro",
        filterKeyMeaning: { key in
        switch key {
        case .status: "status: 1xx, 2xx, 3xx, 4xx, 5xx, error (sin respuesta), store (respondida desde el almacén de Kiosk) o un código del 100 al 599"
        case .source: "source: una de " + SourceID.allCases.map(\.rawValue).joined(separator: ", ")
        case .cache: "cache: hit, fwd, fwd=MOTIVO (" + CacheStatus.Forward.allCases.map(\.rawValue).joined(separator: ", ")
            + "; fwd=miss abarca también uri-miss y vary-miss), miss, stale o una decisión: " + CacheDecision.allCases.map(\.rawValue).joined(separator: ", ")
        case .method: "method: un método HTTP en letras, como GET o HEAD"
        case .endpoint: "endpoint: el nombre de un endpoint, como rickandmorty.characters, o el host:puerto de una app tal como lo muestra el registro (127.0.0.1:8080)"
        case .host: "host: un nombre de host o una dirección, con :puerto para un solo puerto (api.example.com, 127.0.0.1:8080, [::1]:3000), o *.example.com para sus subdominios"
        case .slow: "slow: una duración con su unidad, como slow:>500ms, slow:>=2s o slow:1.5s (como mínimo)"
        case .has: "has: error (la solicitud falló) o body (se capturó un cuerpo de respuesta)"
        }
    },
        negationHelp: "un signo menos delante de un término clave:valor deja solo lo que no coincide con él",
        wordsHelp: "las demás palabras buscan en URL y cuerpos; las comillas hacen literal una palabra con dos puntos o con un menos delante",
        ruleOrder: "Una solicitud pasa por el punto de interrupción de la solicitud; luego la contesta una simulación o el servidor remoto; después, las reglas activas que coinciden reescriben esa respuesta, en el orden de esta lista (una regla posterior ve el resultado de la anterior); luego se borran los secretos, el intercambio se registra tal como lo recibe la aplicación y el punto de interrupción de la respuesta puede detenerlo. Una regla que hace fallar solicitudes las hace fallar antes de enviar nada.",
        rulesIntro: "Las reglas cambian las respuestas sin detenerlas: estado, cabeceras, un JSON Patch sobre el cuerpo, latencia o un fallo. ",
        rulesHowTo: " Abre una solicitud registrada y elige Crear una regla, o usa ",
        newRule: "Nueva regla",
        noRewriteRules: "No hay reglas de reescritura.",
        resetHitsLabel: { "Poner a cero los usos de la regla \($0)" },
        resetHits: "Poner a cero",
        name: "Nombre",
        matches: "Coincide con",
        does: "Hace",
        editRuleTitle: { "Editar la regla n.º \($0)" },
        anyEndpoint: "cualquier endpoint (coincidir por URL)",
        anyMethod: "cualquier método",
        nameHint: "Opcional: sin nombre, la regla se llama por lo que hace.",
        enabled: "Activa",
        whichRequests: "Qué solicitudes",
        endpoint: "Endpoint",
        urlPattern: "Patrón de URL",
        urlPatternHint: "Una URL exacta (sin contar los parámetros secretos ni su orden) o una con comodines *; vacía para cualquiera.",
        method: "Método",
        whatItDoes: "Qué hace",
        statusHint: "Vacío conserva el estado de la respuesta.",
        headersToSet: "Cabeceras que poner",
        headersToSetHint: "«Nombre: valor» por línea; cada una sustituye todas las cabeceras de su nombre.",
        headersToRemove: "Cabeceras que quitar",
        headersToRemoveHint: "Un nombre por línea.",
        patch: "JSON Patch (RFC 6902) aplicado al cuerpo",
        patchHint: "Por ejemplo [{\"op\": \"replace\", \"path\": \"/results/0/name\", \"value\": \"Rule Rick\"}]. Operaciones add, remove, replace, move, copy y test; las rutas son JSON Pointers (\"\" es el cuerpo entero). Cuando no se puede aplicar a una respuesta, la respuesta pasa sin cambios y la página de su solicitud dice por qué.",
        latency: "Latencia (ms)",
        latencyHint: "Se añade antes de que la respuesta llegue a la aplicación.",
        failRequest: "Hacer fallar la solicitud",
        noAnswer: "no: contestar",
        failure: { failure in switch failure { case .timeout: "sí: agotar el tiempo"
            case .offline: "sí: no poder conectar (sin conexión)"
            case .reset: "sí: conexión restablecida" } },
        createRule: "Crear la regla",
        saveRule: "Guardar la regla",
        backToRules: "‹ Reglas de reescritura",
        notSaved: { "No se guardó: \($0)" },
        makeRuleLabel: "Crear una regla: una regla de reescritura a partir de esta solicitud",
        makeRule: "Crear una regla",
        ruleTouch: { "Regla n.º \($0) «\($1)»" },
        mockTouch: { "Regla de simulación n.º \($0) \($1)" },
        breakpointTouch: { "Punto de interrupción en \($0) (detenida n.º \($1))" },
        tunnelTouch: { "Túnel a \($0), transmitido sin leerlo" },
        streamTouch: "Transmitido a la app a medida que llegaba",
        insecureTouch: "Certificado sin comprobar",
        uncleanEndTouch: "Terminada sin close_notify de TLS",
        appClosedTouch: "La app cerró su lado antes de la respuesta",
        bodyCutTouch: "Cuerpo de la solicitud incompleto",
        proxy: "Proxy",
        proxyCache: "Caché sin conexión",
        proxyCacheIntro: "El proxy guarda las respuestas que HTTP deja guardar a una caché y las devuelve cuando un servidor no puede responder.",
        proxyCacheFallback: "Cada petición va al servidor; cuando no se le alcanza, tarda demasiado o falla (5xx), se da la respuesta guardada.",
        proxyCacheOff: "No se guarda nada ni se responde desde la caché.",
        proxyCacheOffline: "Sin conexión: no se pregunta a ningún servidor. Se dan las respuestas guardadas; lo demás es un 504.",
        proxyCacheHTTP: "Una caché HTTP privada (RFC 9111): una respuesta vigente se da sin preguntar al servidor; una caducada se "
            + "revalida, o se da al momento dentro de stale-while-revalidate, o cuando el servidor falla dentro de stale-if-error.",
        cacheMode: "Cómo responde la caché",
        cacheModeFallback: "Respaldo",
        cacheModeHTTP: "Caché HTTP",
        cacheModeOff: "Apagada",
        goOffline: "Pasar a sin conexión",
        goOnline: "Volver a conectar",
        proxyCacheEmpty: "Todavía no hay nada guardado.",
        proxyCacheCannotStore: "La caché no puede guardar respuestas ahora; el proxy sigue sin guardarlas. Motivo: ",
        proxyCacheAnswersOf: { "Sus respuestas usadas más recientemente (\($0))" },
        proxyCacheMoreAnswers: { shown, total, host in
            "Las \(shown) usadas más recientemente de \(total); `kiosk proxy cache list --host \(host)` las lista todas."
        },
        proxyCacheEntry: "Respuesta guardada",
        proxyCacheEntryFacts: { status, age, hits in
            "Estado \(status), guardada \(Age(Double(age)).compact.map { "hace \($0)" } ?? "ahora mismo"), dada desde la caché \(hits) \(hits == 1 ? "vez" : "veces")."
        },
        proxyCacheEntryChanged: { age in
            "Una petición que cambió esta URL (un POST, PUT o DELETE) tuvo éxito "
                + "\(Age(Double(age)).compact.map { "hace \($0)" } ?? "ahora mismo"), después de guardarse esta respuesta, así que "
                + "puede estar desfasada: solo se da cuando el servidor la confirma o, en los modos fallback y sin conexión, cuando "
                + "el servidor no puede responder. La próxima respuesta del servidor la sustituye."
        },
        proxyCacheVaried: { fields in
            "Pedida con " + fields.map { field in field.value.map { "\(field.name): \($0)" } ?? "sin \(field.name)" }.joined(separator: "; ")
        },
        proxyCacheRemove: "Quitar esta respuesta",
        proxyCacheRow: { count, size, hits in
            "\(count) \(count == 1 ? "respuesta" : "respuestas"), \(size); dadas desde la caché \(hits) \(hits == 1 ? "vez" : "veces")"
        },
        proxyCacheClearHost: "Vaciar",
        proxyCacheClearAll: "Vaciar toda la caché",
        proxyCacheClearAllConfirm: { "¿Quitar \($0 == 1 ? "la respuesta guardada" : "las \($0) respuestas guardadas")? Sin conexión, las apps recibirán un 504 por cada una." },
        clearConfirm: "¿Vaciar todas las solicitudes registradas? No se puede deshacer.",
        deleteRuleConfirm: { "¿Eliminar la regla \($0)? No se podrá recuperar." },
        proxyCacheTotal: { count, size in "\(count) \(count == 1 ? "respuesta" : "respuestas"), \(size) en total." },
        proxyNone: "No hay ningún proxy en este proceso: esta consola es la de `kiosk serve`. `kiosk proxy` arranca uno, con su propia consola al lado.",
        proxyListeners: "Direcciones de escucha",
        forwardListener: "el proxy directo: configúralo como proxy HTTP y HTTPS de la app",
        reverseListener: { "un proxy inverso hacia \($0): úsalo como URL base de la app" },
        proxyPassword: "Los clientes deben enviar la contraseña del proxy (Proxy-Authorization, usuario kiosk).",
        proxyInsecure: "Los certificados de los servidores no se comprueban (--insecure-upstream): cualquiera entre Kiosk y un servidor puede leer y cambiar los intercambios. Cada intercambio HTTPS lo indica.",
        proxyCounts: "Desde que arrancó",
        countOpenConnections: "Conexiones abiertas",
        countConnections: "Conexiones",
        countRequests: "Solicitudes por el depurador",
        countIntercepted: "Conexiones HTTPS leídas",
        countTunnels: "Conexiones HTTPS transmitidas sin leer",
        countUpgrades: "WebSocket y otros cambios de protocolo",
        countRefused: "Respondidas por el proxy con un error",
        countCutShort: "Abandonadas por la app antes del final de su cuerpo",
        proxyTrust: "Confiar en la CA de Kiosk",
        proxyFingerprint: "Huella SHA-256: ",
        downloadPEM: "Certificado (PEM)",
        downloadDER: "Certificado (DER, Android y Windows)",
        downloadProfile: "Perfil para iPhone, iPad y Mac",
        proxyReads: { "Solo se lee el HTTPS de \($0); los demás hosts pasan sin leerse." },
        proxyIgnores: { "Pasan sin leerse: \($0)." },
        proxySetupPage: "Un dispositivo que usa este proxy encuentra estos pasos, el certificado y un perfil para iPhone en ",
        proxyNotReading: "Este proxy no lee HTTPS: sus túneles CONNECT pasan sin leerse, así que no hay certificado en que confiar.",
        applied: " — aplicada: ",
        didNotApply: "no se aplicó",
        touchedBy: "Modificada por",
        editAndResendTitle: { "Editar y reenviar n.º \($0)" },
        urlWithoutQuery: "URL (sin su consulta)",
        urlHint: { name, keys in "Solo puede ir a los servidores de \(name)" + (keys ? ", ya que Kiosk vuelve a poner las claves de \(name) al enviarla." : ".") },
        queryItems: "Parámetros de la consulta",
        queryHint: { placeholder, fromSource in "«nombre=valor» por línea, tal como se leen (Kiosk los codifica). Un secreto se lee \(placeholder): "
            + (fromSource ? "la fuente vuelve a poner su clave al enviar." : "Kiosk lo ocultó al registrarlo; escríbelo de nuevo para enviarlo.") },
        headers: "Cabeceras",
        headersHint: { placeholder, fromSource in "«Nombre: valor» por línea. Una cabecera registrada como \(placeholder) "
            + (fromSource ? "se omite" : "debe escribirse de nuevo o quitarse") + "; Host y Content-Length son cosa del transporte." },
        body: "Cuerpo",
        bodyHint: "Se envía tal como se escribe (UTF-8); vacío para ninguno.",
        binaryBodyKept: { "El cuerpo (\($0)) no es texto: se envía tal como se registró, byte a byte, y no se puede editar aquí." },
        binaryBodyCut: { "El cuerpo (\($0)) no es texto y lo cortó el límite de captura: esta solicitud no se puede volver a enviar, ni tal cual ni editada aquí." },
        send: "Enviar",
        revertTo: { "Volver a n.º \($0) tal como se registró" },
        backToRequest: { "‹ Solicitud n.º \($0)" },
        composeNote: { "Se envía por todo lo que atraviesan las solicitudes de la aplicación —la política de salida, los puntos de interrupción, las simulaciones y las reglas de reescritura— y se registra como una solicitud nueva enlazada con n.º \($0). Su respuesta se muestra en el registro y nunca se guarda para la aplicación." },
        editAndResendLabel: "Editar y reenviar: editar esta solicitud y enviarla de nuevo",
        editAndResend: "Editar y reenviar",
        replayLabel: "Repetir: enviar de nuevo esta solicitud sin cambios (se registra como una solicitud nueva)",
        replay: "Repetir",
        replayRefused: { "Sin repetición: \($0) Editar y reenviar lo pide." },
        compare: "Comparar",
        compareWithPrevious: { "Comparar con la respuesta anterior de esta URL (n.º \($0))" },
        noEarlierAnswer: "No hay ninguna respuesta anterior de esta URL en el registro; se puede comparar otra solicitud por su número.",
        compareWithRequest: "Comparar con la solicitud n.º ",
        compareTwo: "Comparar dos solicitudes",
        keptEditName: { "Seguir devolviendo la edición de \($0)" },
        compareFirst: "Solicitud n.º ",
        bodySize: "Tamaño del cuerpo",
        noBody: "ninguno",
        summary: "Resumen",
        theSame: "Iguales.",
        sameBytes: "Los mismos bytes.",
        notModifiedNoBody: { "La n.º \($0) es un 304: el servidor confirmó la respuesta que Kiosk guardaba sin volver a enviarla, así que no hay cuerpo que comparar." },
        pausedNotModified: "Es un 304 Not Modified: el servidor confirmó la copia que Kiosk guarda, sin cuerpo, y la página mostrará esa copia. "
            + "Para editar una respuesta, pausa una página que Kiosk aún no haya guardado, o responde a esta con el estado 200 y un cuerpo escrito abajo.",
        sameJSON: "El mismo JSON (escrito de otra forma).",
        changeCounts: { count, more, added, removed, changed in "\(count)\(more ? "+" : "") cambio\(count == 1 ? "" : "s"): \(added) añadido\(added == 1 ? "" : "s"), \(removed) quitado\(removed == 1 ? "" : "s"), \(changed) modificado\(changed == 1 ? "" : "s")" },
        added: " añadido ",
        removed: " quitado ",
        onlyFirstChanges: "Solo se listan los primeros cambios.",
        comparedByLine: { before, after in "No es JSON en los dos lados: comparado línea a línea; \(before) línea\(before == 1 ? "" : "s") antes y \(after) después de los cambios son iguales." },
        comparedCutByLine: { ids, before, after in
            let named = ids.map { "n.º \($0)" }.joined(separator: " y ")
            return "El cuerpo de \(named) se recortó al capturarlo (el registro guarda su comienzo), así que los cuerpos no se pueden comparar enteros: "
                + "comparado línea a línea; \(before) línea\(before == 1 ? "" : "s") antes y \(after) después de los cambios son iguales."
        },
        onlyFirstLines: "Solo se listan las primeras líneas.",
        overRequests: { "Sobre \($0 == 1 ? "la solicitud" : "las \($0) solicitudes") que guarda el registro · " },
        cacheDecisions: "Decisiones de caché",
        freshDecisions: "Frescas (del almacén, o confirmadas por un 304)",
        staleDecisions: "Caducadas (mostradas pasada su frescura: revalidando, tras un error o sin conexión)",
        fromUpstream: "Del servidor remoto",
        mockedOrEdited: "Simuladas o editadas",
        slowestEndpoints: "Endpoints más lentos",
        noUpstreamYet: "Ninguna solicitud ha llegado aún a un servidor remoto.",
        slowest: "La más lenta",
        p95ToScale: "p95 a escala",
        bytesBySource: "Bytes por fuente",
        responseBytes: "Bytes de respuesta",
        otherSources: "Otras (imágenes, sondeos, el resto)",
        typeOf: "Tipo de {path}",
        endpointCaching: { caching in
            switch caching {
            case .freshness(let hours): "Cache-Control / Expires si llegan, si no \(hours) h; ETag y Last-Modified revalidados con 304"
            case .pictures(let megabytes): "caché en memoria, luego en disco de \(megabytes) MB (sale primero lo menos usado); ETag revalidado; si no, 7 días"
            }
        },
        responseYields: { yields in
            switch yields {
            case .rankedArticles(let count): "\(count) artículos por orden de popularidad"
            case .oneCharacter: "un personaje"
            case .oneIDAnswersOne(let model): "con un solo id: \(model)"
            case .userEditedDogs: "la lista de perros (se conservan tus eliminaciones y tu orden)"
            case .rasterImage: "bytes de una imagen"
            }
        },
        typeString: "texto", typeNumber: "número", typeBoolean: "verdadero o falso", typeNull: "nulo",
        valueOf: "Valor de {path}",
        keyIn: "Clave {key} en {path}",
        removeKey: "Quitar {key} de {path}",
        removeItem: "Quitar el elemento {index} de {path}",
        addTo: "Añadir a {path}",
        addKey: "+ clave",
        addItem: "+ elemento",
        editAsText: "Editar como texto",
        editAsTree: "Editar como árbol",
        notJSON: "No es JSON: {reason} en el carácter {position}",
        jsonExpectedKey: "se esperaba una clave entre comillas",
        jsonExpectedColon: "se esperaba «:» tras la clave",
        jsonExpectedCommaOrBrace: "se esperaba «,» o «}» en un objeto",
        jsonExpectedCommaOrBracket: "se esperaba «,» o «]» en un array",
        jsonExpectedValue: "se esperaba un valor",
        jsonUnterminatedString: "cadena sin cerrar",
        jsonBadString: "escape o carácter de control no válido en una cadena",
        jsonTextAfterEnd: "hay texto tras el final del documento",
        notANumber: "{path} no es un número (como 12, -3.5 o 1e6): no se envió nada. Corrígelo o elige otro tipo.",
        requestsLoggedOne: "{count} solicitud registrada",
        requestsLoggedOther: "{count} solicitudes registradas",
        newRowsOne: "1 solicitud nueva en la lista",
        newRowsOther: "{count} solicitudes nuevas en la lista",
        pausedOne: "{count} solicitud está detenida en un punto de interrupción. ",
        pausedOther: "{count} solicitudes están detenidas en un punto de interrupción. ",
        enterToken: "Escribe el token de depuración (KIOSK_DEBUG_TOKEN) para abrir el depurador de red.",
        loopbackOnly: "El depurador de red se sirve sin token solo cuando Kiosk escucha en loopback; define KIOSK_DEBUG_TOKEN para usarlo desde otra máquina.",
        tooManyTokens: { "Se han probado demasiados tokens erróneos desde esta dirección. Vuelve a intentarlo dentro de \($0) s." },
        wrongToken: "Ese no es el token de depuración: el valor de KIOSK_DEBUG_TOKEN donde se arrancó este Kiosk.",
        captureOffMessage: "El registro de solicitudes está desactivado en la configuración (\"capture\": false).",
        host: "Servidor",
        type: "Tipo",
        size: "Tamaño",
        time: "Hora",
        failureColumn: "Fallo",
        failed: "falló",
        pending: "pendiente",
        inFlightNote: "En curso: su registro, con su respuesta, aparece cuando termina",
        appGoneInFlight: "La app cerró su conexión: puede que haya desistido",
        pausedRowStatus: "detenida",
        pausedRowNote: "Detenida en un punto de interrupción: ábrela para decidir",
        answeredFromStore: "Contestada desde el almacén, sin solicitud al servidor remoto",
        copy: "Copiar",
        copied: "Copiado",
        copyCurl: "Copiar la orden cURL",
        pauseNextRequest: "Detener las solicitudes de este endpoint (un punto de interrupción, activo hasta desactivarlo)",
        nextRequestPauses: "Cada solicitud de este endpoint se detiene en un punto de interrupción hasta que se desactive: ",
        quickFilters: "Filtros rápidos",
        chipAll: "Todas",
        chipAPI: "API",
        chipPictures: "Imágenes",
        chipStore: "Almacén",
        chipErrors: "Errores",
        clear: "Vaciar",
        clearLabel: "Vaciar el registro de solicitudes",
        pauseRecording: "Pausar la grabación",
        resumeRecording: "Reanudar la grabación",
        recordingPaused: "La grabación está en pausa: las solicitudes nuevas no se registran. ",
        requestsUnlogged: { count in
            "\(count) solicitud\(count == 1 ? " se respondió" : "es se respondieron") sin registrarse: llegaron más de las que "
                + "el registro podía escribir, o falló una escritura (un disco lleno). El registro sigue con las siguientes."
        },
        noSuchRequest: { "No hay ninguna solicitud n.º \($0) en el registro; puede que se haya descartado." },
        noSuchPair: { "La solicitud n.º \($0) o la n.º \($1) no está en el registro; puede que se haya descartado." },
        noSuchRule: { "No hay ninguna regla de reescritura n.º \($0)." },
        ruleChangedElsewhere: "esta regla cambió en otro sitio (otra consola, o kiosk rule edit) desde que se abrió esta página. Tu cambio está abajo tal como lo escribiste: guárdalo otra vez para reemplazar ese cambio, o abre la regla de nuevo para verlo.",
        mockChangedElsewhere: "la respuesta de este mock cambió en otro sitio (otra consola, o kiosk mock edit) desde que se abrió esta página. Tu cambio está abajo tal como lo escribiste: guárdalo otra vez para reemplazar ese cambio, o abre el mock de nuevo para verlo.",
        noSuchMock: { "No hay ninguna regla de simulación n.º \($0)." },
        noSuchEndpoint: { "No hay ningún endpoint llamado «\($0)»." },
        badRequestID: "Un id de solicitud es un número entero positivo.",
        badRuleID: "Un id de regla es un número entero positivo.",
        badStoredAnswerID: "El id de una respuesta guardada es un número entero positivo.",
        noSuchRuleAction: "Una regla no tiene esa acción (enable, disable, delete; una regla de reescritura también reset-hits).",
        nothingToMock: { "La solicitud n.º \($0) no tiene respuesta que simular." },
        mockBodyCut: { "El cuerpo de la solicitud n.º \($0) se recortó al capturarlo, así que no se puede reproducir entero." },
        proxyHasNoCA: "Este proxy no lee HTTPS: no tiene CA.",
        noSuchDownload: { "Aquí no hay nada: \($0) enumera las descargas." },
        noStoredAnswer: { "Ninguna respuesta guardada tiene el id \($0); puede que se haya descartado o borrado." },
        noProxyCache: "Este proceso no tiene caché de proxy: la tiene kiosk proxy, con esta consola a su lado.",
        listQueryProblem: { problem in
            switch problem {
            case .textTooLong(let most): "El texto de búsqueda tiene más de \(most) caracteres."
            case .noSuchSource(let name): "No hay ninguna fuente llamada «\(name)»."
            case .notAHost(let host): "«\(host)» no es un nombre de host ni una dirección (api.example.com, 127.0.0.1:8080)."
            case .badStatus: "El estado debe ser 2xx, 3xx, 4xx, 5xx, error o store."
            case .badMethod: "Eso no es un método HTTP."
            case .badDecision: "La decisión debe ser una de \(CacheDecision.allCases.map(\.rawValue).joined(separator: ", "))."
            case .badMinimum: "min_ms debe ser un número de milisegundos entre 0 y un día."
            case .badBefore: "before debe ser el id de una petición."
            case .badLimit: "limit debe estar entre 1 y 1000."
            case .filterTooLong(let most): "El filtro tiene más de \(most) caracteres."
            }
        },
        pictureAddress: "{la dirección de la imagen}",
        proxyCacheFormUnknown: "Indica qué cambiar: el modo (fallback, http u off), offline (on u off), clear (un host, o ninguno para todos) o remove (el id de una respuesta guardada).",
        proxyOfflineNeedsCache: "Sin conexión se responde desde la caché, que el modo off desactiva: elige antes fallback o http.",
        proxyOffNeedsOnline: "El modo off no guarda ni da nada, y sin conexión se responde con eso: vuelve antes a estar en línea.",
        diffNeedsTwoIDs: "Indica dos ids de solicitud para comparar: a y b, números enteros desde 1.",
        notPausedAnyMore: { "La solicitud n.º \($0) ya no está en pausa: se decidió o su tiempo de espera la dejó seguir." },
        editNotSent: "Lo que escribiste no se envió; está abajo, para copiarlo.",
        ruleProblem: { problem in
            switch problem {
            case .nameTooLong: "El nombre tiene más de 200 caracteres."
            case .nameNotOneLine: "El nombre debe ser una sola línea de texto."
            case .noTarget: "Indica a qué solicitudes se aplica la regla: un endpoint, un patrón de URL o ambos."
            case .unknownEndpoint(let name, let known): "No hay ningún endpoint llamado «\(name)»; los conocidos: \(known.joined(separator: ", ")). "
                + "Para el host de una app a través de kiosk proxy, da un patrón de URL (http://\(name)/*)."
            case .urlPattern(.notHTTP): "El patrón de URL debe ser una URL http(s) o un patrón que empiece por *."
            case .urlPattern(.notOneLine): "El patrón de URL debe ser una sola línea, sin caracteres de control (ninguna URL los tiene)."
            case .urlPattern(.tooLong(let kilobytes)): "El patrón de URL ocupa más de \(kilobytes) KB."
            case .urlPattern(.badPort(let port)): "El puerto \(port) del patrón de URL no es un puerto: van del 1 al 65535."
            case .urlPattern(.userInfo): "El patrón de URL lleva un usuario o una contraseña antes del host, que la URL de ninguna solicitud lleva "
                + "(un cliente los envía en la cabecera Authorization): quítalos."
            case .urlPattern(.noHost(let pattern)):
                "El patrón de URL no es una URL con host («\(pattern)»): escríbelo como la URL de una solicitud, con * donde pueda ir cualquier cosa."
            case .badMethod: "El método no es un método HTTP (token de RFC 9110: solo letras, dígitos y !#$%&'*+-.^_`|~)."
            case .doesNothing: "La regla no hace nada: dale un estado, cabeceras, un JSON Patch, una latencia o un fallo."
            case .tooManyHeaders(let maximum): "La regla cambia más de \(maximum) cabeceras."
            case .headerValueTooLong(let name, let kilobytes): "El valor de la cabecera \(name) ocupa más de \(kilobytes) KB."
            case .statusOutOfRange: "El estado debe ser un número del 200 al 599 (un 1xx no es una respuesta)."
            case .badHeaderName(let name): "«\(name)» no es un nombre de cabecera HTTP válido (token de RFC 9110)."
            case .badHeaderValue(let name):
                "El valor de la cabecera \(name) no es un valor de campo HTTP válido (no se admiten CR, LF, NUL ni otros caracteres de control salvo el tabulador)."
            case .transportHeader(let name):
                "\(name) es del transporte: Kiosk escribe el encuadre (Content-Length, Transfer-Encoding) del cuerpo que recibe la app "
                    + "y quita los campos de un solo salto (Connection, Keep-Alive, TE, Trailer, Upgrade, Proxy-*), así que una regla no puede "
                    + "ponerlo ni quitarlo."
            case .latencyOutOfRange(let maximum): "La latencia debe ir de 0 a \(maximum) ms."
            case .failureWithAnswer: "Una regla que hace fallar la solicitud no tiene respuesta que reescribir: dale solo un fallo (y una latencia)."
            case .patchTooLong(let kilobytes): "El JSON Patch ocupa más de \(kilobytes) KB."
            case .patchEmpty: "El JSON Patch no tiene ninguna operación."
            case .patchInvalid(let error): "El JSON Patch no es válido: \(spanishPatchProblem(error))"
            }
        },
        keptNeedsJSON: { "Una regla solo puede seguir devolviendo un cuerpo JSON: \($0)" },
        jsonProblem: spanishJSONProblem,
        latencyNotANumber: "La latencia debe ser un número entero de milisegundos.",
        unknownFailure: { "El fallo debe ser uno de estos: \($0)." },
        resendProblem: { problem in
            switch problem {
            case .badMethod: "El método no es un método HTTP (token de RFC 9110: solo letras, dígitos y !#$%&'*+-.^_`|~)."
            case .badHeaderName(let position): "El nombre de la cabecera \(position) no es un nombre de cabecera HTTP válido (token de RFC 9110)."
            case .badHeaderValue(let name):
                "El valor de la cabecera \(name) no es un valor de campo HTTP válido (no se admiten CR, LF, NUL ni otros caracteres de control salvo el tabulador)."
            case .tunnelMethod: "CONNECT pide un túnel, no una URL, así que no se envía una solicitud con él."
            case .notHTTPURL(let text): "La URL debe ser una URL http(s) con host, sin nombre de usuario delante (se recibió «\(text)»)."
            case .unsendableURL(let text): "La URL no se puede enviar: «\(text)»."
            case .truncatedBody(let id):
                "El cuerpo de la solicitud n.º \(id) se recortó al capturarla, así que no se puede volver a enviar entera: edítalo antes."
            case .incompleteBody(let id):
                "El cuerpo de la solicitud n.º \(id) nunca llegó entero de su app, así que no se envió ni se reenvía a medias: escribe el cuerpo en Editar y reenviar."
            case .notSourceOrigin(let id, let source, let allowed, let keysPutBack):
                "La solicitud n.º \(id) es de \(source)\(keysPutBack ? " (Kiosk vuelve a poner sus claves al enviarla)" : ""), así que solo puede ir a \(allowed)."
            case .otherOrigin(let id, let origin):
                "La solicitud n.º \(id) fue a \(origin); una edición puede cambiar su método, ruta, consulta, cabeceras y cuerpo, no adónde va. "
                    + "Cópiala como cURL para enviarla a otro sitio."
            case .hiddenSecrets(let id, let secrets):
                "No se puede volver a enviar la solicitud n.º \(id) tal cual: Kiosk ocultó "
                    + ResendProblem.listed(secrets, query: "consulta", header: "cabecera", body: "cuerpo", none: "un secreto")
                    + " al registrarla y no lo conoce. Escríbelo en Editar y reenviar (o quítalo)."
            case .cannotSign(let reason): "Kiosk no puede firmar la solicitud: \(reason)"
            case .webSocket(let id): "La solicitud n.º \(id) abrió un WebSocket, que no se vuelve a enviar: Repetir abriría uno sin nadie "
                + "que hable en él. Ábrelo de nuevo desde la app."
            }
        },
        touchPhrase: spanishTouchPhrase,
        ruleActions: spanishRuleActions
    )
}

extension ConsoleWords {
    /// What a key of the filter language accepts, as a sentence saying what its value must be ("status debe ser 2xx, …"),
    /// from the key's help line ("status: 2xx, …").
    static func spanishAccepted(_ key: FilterKey) -> String {
        let meaning = spanish.filterKeyMeaning(key)
        let prefix = key.rawValue + ": "
        return key.rawValue + " debe ser " + (meaning.hasPrefix(prefix) ? String(meaning.dropFirst(prefix.count)) : meaning)
    }
}

/// What a mock, a breakpoint, a resend or a rule did, in Spanish (`ConsoleWords.touchPhrase`).
private func spanishTouchPhrase(_ phrase: ExchangeTouch.Phrase) -> String {
    switch phrase {
    case .mockAnswered(let status): "respondió con el estado \(status), sin el origen"
    case .resent(let changes) where changes.isEmpty: "enviada de nuevo sin cambios"
    case .resent(let changes):
        "enviada de nuevo con cambios: " + changes.map { change in
            switch change {
            case let .method(from, to): "método \(from) → \(to)"
            case let .url(from, to): "URL \(from) → \(to)"
            case let .query(from, to): "consulta \(from) → \(to)"
            case .headerAdded(let name): "cabecera \(name) añadida"
            case .headerRemoved(let name): "cabecera \(name) quitada"
            case .headerChanged(let name): "cabecera \(name) cambiada"
            case .body: "cuerpo cambiado"
            }
        }.joined(separator: "; ")
    case .breakpoint(let outcome):
        switch outcome {
        case .requestAborted: "abortada en el punto de interrupción de la solicitud: nunca se envió"
        case .requestEdited: "la solicitud se editó en el punto de interrupción de la solicitud"
        case .answeredAtRequest: "respondida en el punto de interrupción de la solicitud, sin enviarla"
        case .answeredAtError: "respondida en el punto de interrupción del error en lugar del error"
        case .errorAborted: "abortada en el punto de interrupción del error"
        case .responseEdited: "la respuesta se editó en el punto de interrupción de la respuesta"
        case .responseAborted(let status): "abortada en el punto de interrupción de la respuesta: el \(status) del origen nunca llegó a la app"
        case .requestHeld(let seconds): "retenida en el punto de interrupción de la solicitud \(seconds) s, luego enviada sin cambios"
        case .responseHeld(let seconds): "la respuesta se retuvo en el punto de interrupción de la respuesta \(seconds) s, luego pasó sin cambios"
        case .droppedAppGone: "la app cerró su conexión mientras estaba retenida en un punto de interrupción: descartada, nunca respondida"
        }
    case .ruleFoundNoAnswer: "la solicitud falló antes de que llegara una respuesta: nada que reescribir"
    case .appClosedFirst(let milliseconds):
        "la app cerró su lado de la conexión "
            + (milliseconds.map { "a los \($0) ms del intercambio, antes de que llegara la respuesta" } ?? "antes de que se enviara su solicitud")
            + "; lo que resultó del intercambio (su respuesta, o el aviso del proxy sobre su fallo) se le envió igualmente (una app que solo dejó de enviar, como hace nc -N, la lee; una que desistió, por un "
            + "tiempo de espera o una solicitud cancelada, no)"
    case .bodyCut(let received):
        "su cuerpo no llegó entero (\(received) byte\(received == 1 ? "" : "s")): la solicitud nunca se envió, y no se reenvía tal cual "
            + "(Editar y reenviar envía un cuerpo escrito entero)"
    case let .ruleRewrote(edits, dropped):
        (edits.isEmpty ? "coincidió; nada que cambiar" : edits.map(spanishRuleEdit).joined(separator: "; "))
            + (dropped ? "; se quitaron los validadores de la solicitud para que llegara un cuerpo entero que parchear" : "")
    case let .ruleFailed(failure, milliseconds):
        "hizo fallar la solicitud (\(spanishFailure(failure))) sin enviarla" + (milliseconds > 0 ? " a los \(milliseconds) ms" : "")
    case .ruleSkipped(let reason):
        switch reason {
        case .statusNotFinal: ConsoleWords.spanish.ruleProblem(.statusOutOfRange)
        case .transportField(let name): ConsoleWords.spanish.ruleProblem(.transportHeader(name))
        case .patchInvalid(let error): "su JSON Patch no es válido: \(error)"
        case .streamed: "la respuesta se envía a la app según llega: su cuerpo no se puede parchear"
        case .undecodable(let coding):
            "el cuerpo está comprimido (\(coding)) de una forma que Kiosk no pudo descomprimir (dañado, una codificación que no conoce, "
                + "o mayor descomprimido que las respuestas que Kiosk guarda enteras): no se puede parchear"
        case .noBody: "la respuesta no tiene cuerpo que parchear"
        case .notJSON(let reason): "el cuerpo no es JSON (\(reason))"
        case .patchFailed(let error): "su JSON Patch no se pudo aplicar: \(error)"
        }
    }
}

/// One change a rule made to an answer, in Spanish: "estado 200 → 503", "quitó ETag".
private func spanishRuleEdit(_ edit: ExchangeTouch.RuleEdit) -> String {
    switch edit {
    case let .status(from, to): from == to ? "estado \(to) (sin cambios)" : "estado \(from) → \(to)"
    case .removed(let name): "quitó \(name)"
    case .set(let names): "fijó " + names.joined(separator: ", ")
    case let .patched(count, coding):
        "parcheó el cuerpo (\(count) operaci\(count == 1 ? "ón" : "ones"))" + (coding.map { ", tras descomprimirlo de \($0)" } ?? "")
    case .latency(let milliseconds): "+\(milliseconds) ms"
    }
}

/// What a rewrite rule does, in Spanish (`ConsoleWords.ruleActions`): "estado 503 · quitar ETag · JSON Patch · +800 ms".
private func spanishRuleActions(_ actions: RewriteRule.Actions) -> String {
    var parts: [String] = []
    if let status = actions.status { parts.append("estado \(status)") }
    if !actions.removeHeaders.isEmpty { parts.append("quitar " + actions.removeHeaders.joined(separator: ", ")) }
    if !actions.setHeaders.isEmpty { parts.append("fijar " + actions.setHeaders.map(\.name).joined(separator: ", ")) }
    if actions.patch != nil { parts.append("JSON Patch") }
    if let latency = actions.latencyMilliseconds, latency > 0 { parts.append("+\(latency) ms") }
    if let failure = actions.failure { parts.append("fallar: " + spanishFailure(failure)) }
    return parts.isEmpty ? "nada" : parts.joined(separator: " · ")
}

/// How a rule fails a request, in Spanish (`RuleFailure.summary`).
private func spanishFailure(_ failure: RuleFailure) -> String {
    switch failure {
    case .timeout: "agotar el tiempo"
    case .offline: "no poder conectar (sin conexión)"
    case .reset: "conexión restablecida"
    }
}

/// Why a body is not JSON, in Spanish (`OrderedJSON.ParseError.description`).
private func spanishJSONProblem(_ error: OrderedJSON.ParseError) -> String {
    func found(_ found: OrderedJSON.ParseError.Found) -> String {
        switch found {
        case .character(let character): "«\(character)»"
        case .byte(let byte): "el byte 0x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
    }
    let reason = switch error.reason {
    case .textAfterEnd: "hay texto tras el final del documento"
    case .endOfDocument: "el documento termina antes de tiempo"
    case .tooDeep(let levels): "anidado a más de \(levels) niveles"
    case .expectedValue(let what): "se esperaba un valor y hay \(found(what))"
    case .expectedLiteral(let literal): "se esperaba \(literal)"
    case .expectedKey: "se esperaba una clave entre comillas"
    case .expectedColon: "se esperaba «:» tras la clave"
    case .endInsideObject: "el documento termina dentro de un objeto"
    case .expectedCommaOrBrace(let what): "se esperaba «,» o «}» en un objeto y hay \(found(what))"
    case .endInsideArray: "el documento termina dentro de un array"
    case .expectedCommaOrBracket(let what): "se esperaba «,» o «]» en un array y hay \(found(what))"
    case .invalidUTF8: "UTF-8 no válido en una cadena"
    case .controlCharacter: "carácter de control en una cadena"
    case .unpairedSurrogate: "sustituto (surrogate) sin pareja en una cadena"
    case .invalidUnicodeEscape: "escape \\u no válido"
    case .incompleteUnicodeEscape: "escape \\u incompleto"
    case .invalidEscape(let character): "escape \\\(character) no válido"
    case .unterminatedString: "cadena sin cerrar"
    case .incompleteNumber: "número incompleto"
    case .expectedDigit: "se esperaba un dígito"
    case .expectedFractionDigit: "se esperaba un dígito tras el punto decimal"
    case .expectedExponentDigit: "se esperaba un dígito en el exponente"
    case .tooManyValues: "más valores de los que Kiosk construye"
    }
    return "JSON no válido en \(error.path) (byte \(error.offset)): \(reason)"
}

/// Why a JSON Patch cannot be read or applied, in Spanish (`JSONPatch.Error.description`).
private func spanishPatchProblem(_ error: JSONPatch.Error) -> String {
    func place(_ pointer: String?) -> String { pointer ?? "la raíz" }
    func kind(_ kind: JSONPatch.ValueKind) -> String {
        switch kind {
        case .object: "un objeto"
        case .array: "un array"
        case .string: "una cadena"
        case .number: "un número"
        case .boolean: "un booleano"
        case .null: "null"
        }
    }
    let message: String
    switch error.reason {
    case .notJSON(let parse): message = "El parche no es JSON: " + spanishJSONProblem(parse)
    case .notAnArray: message = "Un JSON Patch es un array de operaciones, como " + #"[{"op": "replace", "path": "/status", "value": "Dead"}]."#
    case .operation(let problem):
        message = switch problem {
        case .notAPointer(let text): "«\(text)» no es un JSON Pointer: debe estar vacío o empezar por «/»"
        case .badTilde(let text): "en «\(text)», «~» debe ir seguido de 0 o 1 (~0 es ~, ~1 es /)"
        case .notAnObject: "una operación es un objeto con «op» y «path»"
        case .givenTwice(let name): "«\(name)» aparece dos veces (los miembros de una operación no se repiten)"
        case .missingMember(let name): "falta «\(name)»"
        case .memberNotAPointer(let name): "«\(name)» debe ser una cadena (un JSON Pointer)"
        case .opNotAString: "«op» debe ser una cadena"
        case .removesWholeDocument: "no se puede quitar el documento entero (sustitúyelo)"
        case let .movedIntoItself(path, from): "un valor no se puede mover dentro de sí mismo (\(path) está dentro de \(from))"
        case .unknownOperation(let name): "«\(name)» no es una operación (add, remove, replace, move, copy o test)"
        case let .testFailed(at, actual, expected): "el valor en \(place(at)) es \(actual), no \(expected)"
        case .notAnArrayIndex(let token): "«\(token)» no es un índice de array (0, 1, ... o -)"
        case let .pastTheEnd(index, array, count):
            "el índice \(index) queda tras el final del array en \(place(array)) (\(count) elemento\(count == 1 ? "" : "s"))"
        case let .cannotAddInside(parent, what): "\(place(parent)) es \(kind(what)), así que no se puede añadir nada dentro"
        case .rootHasNoParent: "el documento entero no tiene padre"
        case .endOfArray(let path): "\(path) señala el final de un array, donde no hay ningún valor (solo add puede usar -)"
        case .doesNotExist(let path): "la ruta \(path) no existe"
        }
    }
    guard let index = error.index else { return message }
    return "operación \(index + 1)" + (error.operation.map { " (\($0))" } ?? "") + ": " + message
}
