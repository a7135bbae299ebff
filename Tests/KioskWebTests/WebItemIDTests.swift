import Foundation
import Hummingbird
import HummingbirdTesting
import KioskApp
import KioskDebugger
import KioskCore
import Testing
@testable import KioskWeb

@Suite("Every listed item can be opened")
struct WebItemIDTests {
    @Test("A dog with a 300-character name is listed, and its link answers 200 in the web app and the API")
    func longDogName() async throws {
        try await withWeb { harness, client in
            // Given a dogs list (answered by a mock rule, as after a HAR import) with a dog whose 300-character
            // name becomes its id
            let name = String(String(repeating: "Sir Wagglesworth ", count: 18).prefix(300))
            let dogs: [[String: Any]] = [["dogName": name, "description": "A very good dog.", "age": 3]]
            let body = try JSONSerialization.data(withJSONObject: dogs)
            let dogsURL = await harness.demo.dogsURL
            _ = try harness.kiosk.debugger.mocks.add([MockRule(urlPattern: dogsURL.absoluteString,
                                                      headers: [.init(name: "Content-Type", value: "application/json")],
                                                      body: body)])
            // When the list is shown
            let list = try await client.get("/api/dogs")
            let item = try #require((try list.json()["items"] as? [[String: Any]])?.first)
            let id = try #require(item["itemID"] as? String)
            #expect(id.count > 200)
            let page = try await client.get("/dogs")
            let path = "/dogs/" + QueryString.encode(id)
            #expect(page.body.contains("href=\"\(path)\""))
            // Then its link opens it in the web app and in the API
            let detail = try await client.get(path)
            #expect(detail.status == .ok)
            #expect(detail.body.contains(name))
            let api = try await client.get("/api" + path)
            #expect(api.status == .ok)
            #expect((try api.json()["item"] as? [String: Any])?["title"] as? String == name)
        }
    }
}
