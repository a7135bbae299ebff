// The words of Home and Settings, in both languages: a field each, so a word missing in one is a compile error.

import Foundation

extension Language {
    /// The words of Home (what changed, recently read, favorites) and of Settings.
    var home: HomeStrings { self == .es ? .spanish : .english }
}

/// The words of Home and Settings.
struct HomeStrings: Sendable {
    /// "Since your last visit, 3 h ago".
    let sinceLastVisit: @Sendable (_ ago: String) -> String
    /// "Nothing new since your last visit, 3 h ago."
    let nothingNew: @Sendable (_ ago: String) -> String
    /// "3 new · 2 updated".
    let changeCounts: @Sendable (_ added: Int, _ updated: Int) -> String
    let recentlyRead, allFavorites, favoritesTagline, settings, readingHistory, readingHistoryHint, clearHistory: String
    /// What clearing the reading history does, asked before it is done; given Home's section of it ("Recently read").
    let clearHistoryWarning: @Sendable (String) -> String

    /// The English words.
    static let english = HomeStrings(
        sinceLastVisit: { "Since your last visit, \($0)" },
        nothingNew: { "Nothing new since your last visit, \($0)." },
        changeCounts: { added, updated in
            [added == 0 ? nil : "\(added) new", updated == 0 ? nil : "\(updated) updated"].compactMap { $0 }.joined(separator: " · ")
        },
        recentlyRead: "Recently read", allFavorites: "All favorites",
        favoritesTagline: "What you starred, kept for reading offline.", settings: "Settings", readingHistory: "Reading history",
        readingHistoryHint: "Home lists the items you opened last, on this browser or any device paired with this Kiosk. "
            + "The history stays on the computer running Kiosk.",
        clearHistory: "Clear reading history",
        clearHistoryWarning: { "Forget every item opened, on this browser and on every device paired with this Kiosk? Home's "
            + "“\($0)” starts again empty." })

    /// The Spanish words.
    static let spanish = HomeStrings(
        sinceLastVisit: { "Desde tu última visita, \($0)" },
        nothingNew: { "Nada nuevo desde tu última visita, \($0)." },
        changeCounts: { added, updated in
            [added == 0 ? nil : added == 1 ? "1 nuevo" : "\(added) nuevos",
             updated == 0 ? nil : updated == 1 ? "1 actualizado" : "\(updated) actualizados"].compactMap { $0 }.joined(separator: " · ")
        },
        recentlyRead: "Leído recientemente", allFavorites: "Todos los favoritos",
        favoritesTagline: "Lo que marcaste con una estrella, guardado para leer sin conexión.", settings: "Ajustes",
        readingHistory: "Historial de lectura",
        readingHistoryHint: "Inicio muestra lo último que abriste, en este navegador o en cualquier dispositivo vinculado a "
            + "este Kiosk. El historial se queda en el ordenador donde funciona Kiosk.",
        clearHistory: "Borrar el historial de lectura",
        clearHistoryWarning: { "¿Olvidar todo lo que abriste, en este navegador y en cualquier dispositivo vinculado a este Kiosk? "
            + "«\($0)» de Inicio vuelve a empezar vacío." })
}
