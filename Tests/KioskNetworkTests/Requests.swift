import Foundation
import KioskCore

let exampleURL = URL(string: "http://127.0.0.1:9/api/character?page=1")!

/// A GET for `url`, as the transports under test see one.
func get(_ url: URL = exampleURL) -> HTTPRequest { HTTPRequest(url: url, endpoint: "test") }
