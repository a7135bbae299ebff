import Foundation

/// The JSON documents under Tests/KioskTestSupport/Fixtures, shipped as this module's resources: upstream
/// answers shaped like the real APIs', with their awkward cases.
public enum Fixture {
    /// The bytes of `Fixtures/<name>`; a missing fixture is a mistake in the tests, so it stops them.
    public static func data(_ name: String) -> Data {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"),
              let data = try? Data(contentsOf: url) else {
            fatalError("no fixture named \(name) in KioskTestSupport's Fixtures")
        }
        return data
    }

    /// `Fixtures/<name>` as UTF-8 text.
    public static func text(_ name: String) -> String { String(decoding: data(name), as: UTF8.self) }
}
