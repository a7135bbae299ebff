import Foundation
import KioskApp
import KioskCore
import KioskDemoUpstream
import KioskTestSupport
import Testing

@Suite("Dogs edits and images over the demo upstream", .serialized)
struct UserDataTests {
    @Test("Dogs deletions and order survive a forced refresh")
    func dogsEditsSurviveRefresh() async throws {
        try await withHarness { h in
            // Given the five dogs, one deleted and the last moved to the top
            let dogs = try await h.catalog.page(PageRequest(source: .dogs)).page.items
            #expect(dogs.count == 5)
            try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: dogs[1].itemID)
            try h.catalog.moveInUserOrder(source: .dogs, itemID: dogs[4].itemID, to: 0)

            // When the cached pages are dropped and the list comes again from the upstream as a 200
            try h.database.clearCache()
            let refreshed = try await h.catalog.page(PageRequest(source: .dogs), policy: .force).page.items

            // Then the deleted dog stays deleted and the order is the user's
            #expect(refreshed.map(\.itemID) == [dogs[4], dogs[0], dogs[2], dogs[3]].map(\.itemID))
        }
    }

    @Test("A deleted dog is not found until it is restored: its page, its star, the favorites and the reading history leave it out")
    func deletedDogIsGone() async throws {
        try await withHarness { h in
            // Given a dog read and starred, and another read
            let dogs = try await h.catalog.page(PageRequest(source: .dogs)).page.items
            let (gone, kept) = (dogs[1].itemID, dogs[2].itemID)
            _ = try await h.catalog.item(source: .dogs, itemID: gone)
            try h.catalog.setFavorite(true, source: .dogs, itemID: gone)
            try h.catalog.setFavorite(true, source: .dogs, itemID: kept)
            try h.database.noteRead(source: .dogs, itemID: gone)
            try h.database.noteRead(source: .dogs, itemID: kept)

            // When the first is deleted from the list
            try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: gone)

            // Then its page is not found, saying it was deleted, and it cannot be starred again
            await #expect { try await h.catalog.item(source: .dogs, itemID: gone) } throws: { error in
                guard case .notFound(let message)? = error as? KioskError else { return false }
                return message.contains("was deleted from the Dogs list")
            }
            #expect(throws: KioskError.self) { try h.catalog.setFavorite(true, source: .dogs, itemID: gone) }
            // And the favorites and the reading history show the other alone
            #expect(try h.catalog.favorites().map(\.itemID) == [kept])
            #expect(try h.database.recentlyRead(limit: 10, sources: [.dogs]).map(\.item.itemID) == [kept])

            // When it is restored (the web app's Undo), then it is back everywhere, its star kept
            _ = try h.catalog.restoreToUserOrder(source: .dogs, itemID: gone)
            #expect(try await h.catalog.item(source: .dogs, itemID: gone).item.itemID == gone)
            #expect(Set(try h.catalog.favorites().map(\.itemID)) == [gone, kept])
        }
    }

    @Test("Deleting the last dog fetches the list again")
    func deletingLastDogRefetches() async throws {
        try await withHarness { h in
            let dogs = try await h.catalog.page(PageRequest(source: .dogs)).page.items
            for dog in dogs.dropLast() { try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: dog.itemID) }
            let after = try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: try #require(dogs.last).itemID)
            #expect(after.count == 5)
        }
    }

    @Test("Deleting the last dog offline fails and keeps it: back online the list is that dog, and deleting it then starts the list over")
    func deletingLastDogOffline() async throws {
        try await withHarness { h in
            // Given the dogs list with one dog left
            let dogs = try await h.catalog.page(PageRequest(source: .dogs)).page.items
            for dog in dogs.dropLast() { try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: dog.itemID) }
            let last = try #require(dogs.last).itemID
            // When it is deleted with the upstream unreachable
            try await h.setOffline(true)
            await #expect(throws: KioskError.self) { try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: last) }
            // Then the failed delete changed nothing: the dog is still the list, offline and once back online
            #expect(try h.database.userOrdered(.dogs).map(\.itemID) == [last])
            try await h.setOffline(false)
            let refreshed = try await h.catalog.page(PageRequest(source: .dogs), policy: .force).page.items
            #expect(refreshed.map(\.itemID) == [last])
            // And deleted online, the list starts over
            #expect(try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: last).count == dogs.count)
        }
    }

    @Test("Unknown dog ids and bad positions are clear errors that change nothing")
    func badDogEdits() async throws {
        try await withHarness { h in
            let dogs = try await h.catalog.page(PageRequest(source: .dogs)).page.items
            await #expect(throws: KioskError.self) { try await h.catalog.deleteFromUserOrder(source: .dogs, itemID: "no-such-dog") }
            #expect { try h.catalog.moveInUserOrder(source: .dogs, itemID: dogs[0].itemID, to: 99) } throws: { error in
                // Positions said from 1, as `kiosk dogs move` takes them
                "\(error)".contains("position 100") && "\(error)".contains("(positions 1 to \(dogs.count))")
            }
            #expect(try h.database.userOrdered(.dogs).map(\.itemID) == dogs.map(\.itemID))
        }
    }

    @Test("A hundred concurrent requests for one uncached image make exactly one upstream fetch")
    func imageCoalescing() async throws {
        try await withHarness { h in
            let character = try await h.catalog.item(source: .rickandmorty, itemID: "7")
            let url = try #require(character.item.imageURL)
            await h.demo.resetRequestCounts()

            let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<100 { group.addTask { try await h.kiosk.images.image(for: url).data.count } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }

            #expect(sizes.count == 100)
            #expect(Set(sizes).count == 1)
            #expect(await h.demo.requestCount(pathPrefix: url.path) == 1)
            // And the next request is a memory hit
            #expect(try await h.kiosk.images.image(for: url).origin == .memory)
        }
    }

    @Test("Images from hosts that are not a configured source's are refused")
    func foreignImageHostRefused() async throws {
        try await withHarness { h in
            // Given pictures on a host no source is configured for, and on a scheme that is not http(s)
            for (url, reason) in [("http://example.invalid/x.png", "are not served"), ("file:///etc/passwd", "Only http(s)")] {
                // When each is asked for
                // Then it is refused as not served, before any fetch is tried (which would fail differently)
                do {
                    let image = try await h.kiosk.images.image(for: URL(string: url)!)
                    Issue.record("\(url) was served: \(image.origin)")
                } catch let KioskError.invalidRequest(message) {
                    #expect(message.contains(reason), "\(url): \(message)")
                }
            }
            #expect(await h.kiosk.images.networkFetches == 0)
        }
    }

    @Test("A picture on a foreign host is allowed only when a stored item shows exactly that picture")
    func storedItemPicturesAreAllowed() async throws {
        try await withHarness { h in
            // Given a dog whose picture lives on a host no source is configured for
            let picture = URL(string: "https://pictures.example/dogs/fido.jpg")!
            try h.database.saveItems([CatalogItem(source: .dogs, itemID: "fido", title: "Fido", subtitle: "", summary: "",
                                                  imageURL: picture,
                                                  detail: .dog(Dog(name: "Fido", description: "", age: 2, image: picture)))])
            // Then that exact picture may be fetched, and nothing else from that host
            #expect(throws: Never.self) { try h.kiosk.images.validate(picture) }
            #expect(throws: KioskError.self) {
                try h.kiosk.images.validate(URL(string: "https://pictures.example/private/secret.jpg")!)
            }
        }
    }

    @Test("A stored image is served from disk after a restart, and revalidated with its ETag when stale")
    func imageDiskCache() async throws {
        // Given a picture fetched once into a data folder, from an upstream that outlives each Kiosk below
        let now = ManualClock()
        let folder = TemporaryDirectory.url("kiosk-img")
        let demo = DemoUpstream(configuration: DemoUpstreamConfiguration(port: 0))
        try await demo.start()
        do {
            let first = try await Harness.start(directory: folder, now: now, upstream: demo)
            let url = try #require(try await first.catalog.item(source: .rickandmorty, itemID: "3").item.imageURL)
            let fetched = try await first.kiosk.images.image(for: url)
            #expect(fetched.origin == .network)
            await first.stop()

            // When Kiosk restarts on that folder (an empty memory cache)
            let second = try await Harness.start(directory: folder, now: now, upstream: demo)
            let fromDisk = try await second.kiosk.images.image(for: url)
            // Then the picture comes from disk, whole, without asking the upstream again
            #expect(fromDisk.origin == .disk && fromDisk.data == fetched.data)
            #expect(await demo.requestCount(pathPrefix: url.path) == 1)
            await second.stop()

            // When it restarts again after the picture's week of freshness has passed
            await now.advance(by: .seconds(8 * 86400))
            let third = try await Harness.start(directory: folder, now: now, upstream: demo)
            let revalidated = try await third.kiosk.images.image(for: url)
            // Then one conditional request is made, and its 304 keeps the stored bytes
            #expect(revalidated.origin == .notModified && revalidated.data == fetched.data)
            #expect(await demo.requestCount(pathPrefix: url.path) == 2)
            await third.stop()
        } catch {
            await demo.stop()
            throw error
        }
        await demo.stop()
    }
}
