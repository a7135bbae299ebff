import Foundation
import Hummingbird
import KioskCore

/// The "bad item" fault: a list response that is valid JSON but whose second item has lost its name
/// (`null` where a string belongs), the way real APIs let one broken record into a good page.
///
/// Unlike the truncated and malformed faults it changes the content, not the transfer, so it is a
/// different document: it gets its own ETag, and it is applied before `If-None-Match` is checked.
/// A client holding the clean page's validator therefore gets the altered page (200), not a 304.
enum BadItemFault {
    /// The item that is broken: the second, so the list still starts with a good one and a client
    /// that stops at the first bad item (instead of skipping it) is caught.
    static let itemIndex = 1

    /// Where a list document keeps its items and which member names an item.
    struct ListShape: Sendable {
        var itemsPath: [OrderedJSON.PathStep]
        var nameField: String
        /// Part of the cache key: one document could in principle be served by two shapes.
        var label: String
        /// Marvel's envelope: the ETag is the hash of `data` alone and is repeated in the body's `etag` member.
        var isMarvelEnvelope = false

        var namePath: [OrderedJSON.PathStep] { itemsPath + [.index(BadItemFault.itemIndex), .key(nameField)] }
    }

    /// The list shape of a route's response, or nil for routes and paths that do not answer lists
    /// (details, Rick and Morty's `/api` index and multi-id arrays, images, pages).
    static func listShape(route: APIResponder.Route, path: String) -> ListShape? {
        switch route {
        case .nyt:
            // Every NYT endpoint is a most-popular list.
            ListShape(itemsPath: [.key("results")], nameField: "title", label: "nyt")
        case .marvel where path.split(separator: "/").count == 3:
            // `/v1/public/characters`; `/characters/{id}` (four segments) is the detail.
            ListShape(itemsPath: [.key("data"), .key("results")], nameField: "name", label: "marvel",
                      isMarvelEnvelope: true)
        case .rickAndMorty:
            // Only the paged `{info, results}` document has `results`; the other routes fail to match below.
            ListShape(itemsPath: [.key("results")], nameField: "name", label: "rickandmorty")
        case .dogs:
            ListShape(itemsPath: [], nameField: "dogName", label: "dogs")
        case .marvel, .image, .webPage, .index, .unknown:
            nil
        }
    }

    /// `reply` with the bad item, or `reply` itself when it is not a 200 JSON list with a named second item.
    static func apply(to reply: Reply, route: APIResponder.Route, path: String, cache: ReplyCache) -> Reply {
        guard reply.status == .ok, reply.contentType == Reply.jsonType, let etag = reply.etag,
              let shape = listShape(route: route, path: path) else { return reply }
        // The clean ETag identifies the clean bytes, so the altered reply is cached under it: building it
        // means parsing and re-encoding the page, which repeated requests should not pay for again.
        return cache.reply(for: "baditem|\(shape.label)|\(etag)") { altered(reply, shape: shape) ?? reply }
    }

    private static func altered(_ reply: Reply, shape: ListShape) -> Reply? {
        let bytes = Array(reply.body.readableBytesView)
        guard let document = try? OrderedJSON.parse(Data(bytes)),
              var changed = document.replacing(at: shape.namePath, with: .null) else { return nil }
        var entityTag: String? = nil
        if shape.isMarvelEnvelope {
            // Marvel's tag covers `data` only and is repeated in the body's `etag` member; both follow the change,
            // so the altered page keeps the invariant real Marvel responses (and clients echoing the field) rely on.
            guard case .object(var members) = changed,
                  let dataIndex = members.firstIndex(where: { $0.0 == "data" }),
                  let etagIndex = members.firstIndex(where: { $0.0 == "etag" }) else { return nil }
            let tag = Hashing.entityTag(members[dataIndex].1.compactBytes)
            members[etagIndex].1 = .string(tag)
            changed = .object(members)
            entityTag = tag
        }
        var result = Reply.json(reply.status, changed.compactBytes, cacheControl: reply.cacheControl, etag: entityTag)
        result.retryAfterSeconds = reply.retryAfterSeconds
        return result
    }
}
