import Foundation
import KioskApp
import KioskCore
import KioskTestSupport
import Testing

@Suite("Configuration from the environment, a config file and a secrets file")
struct ConfigurationTests {
    /// A config home holding an empty `kiosk` folder.
    func folder() throws -> URL {
        let url = try TemporaryDirectory.make("kiosk-config")
        try FileManager.default.createDirectory(at: url.appendingPathComponent("kiosk"), withIntermediateDirectories: true)
        return url
    }

    @Test("The data directory follows --data-dir, else XDG_DATA_HOME/kiosk")
    func dataDirectory() throws {
        let explicit = try KioskConfiguration.load(environment: ["HOME": "/home/u"], dataDirectory: "/tmp/x")
        #expect(explicit.databaseURL.path == "/tmp/x/kiosk.sqlite")
        let xdg = try KioskConfiguration.load(environment: ["HOME": "/home/u", "XDG_DATA_HOME": "/data"])
        #expect(xdg.databaseURL.path == "/data/kiosk/kiosk.sqlite")
        let fallback = try KioskConfiguration.load(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "/nonexistent"])
        #expect(fallback.databaseURL.path == "/home/u/.local/share/kiosk/kiosk.sqlite")
    }

    @Test("Base URLs and keys come from the environment and mark those sources as explicitly configured")
    func environment() throws {
        let configuration = try KioskConfiguration.load(environment: [
            "HOME": "/home/u", "XDG_CONFIG_HOME": "/nonexistent",
            "KIOSK_RICKANDMORTY_BASE_URL": "http://127.0.0.1:9999/api", "NYT_API_KEY": "k1",
        ])
        #expect(configuration.sources.rickAndMortyBaseURL.absoluteString == "http://127.0.0.1:9999/api")
        #expect(configuration.sources.nytAPIKey == "k1")
        #expect(configuration.explicitlyConfigured == [.rickandmorty])
    }

    @Test("A key holding a space, a line break or a control character is refused, naming the variable and not the key",
          arguments: ["KIOSK_TEST_SECRET_123\nX", "KIOSK_TEST_SECRET_123 &x=1", "KIOSK_TEST\tSECRET", "KIOSK_TEST_SECRET\u{7F}"])
    func keyWithControlCharacters(key: String) {
        for name in ["NYT_API_KEY", "MARVEL_PUBLIC_KEY", "MARVEL_PRIVATE_KEY"] {
            #expect {
                _ = try KioskConfiguration.load(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "/nonexistent", name: key])
            } throws: { error in
                let text = "\(error)"
                return text.contains(name) && text.contains("printable") && !text.contains("KIOSK_TEST")
            }
        }
    }

    @Test("A base URL that is not http(s) is a clear error")
    func badBaseURL() {
        #expect(throws: KioskError.self) {
            try KioskConfiguration.load(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/nonexistent",
                                                      "KIOSK_NYT_BASE_URL": "ftp://example"])
        }
    }

    @Test("The JSON config file sets base URLs, timeouts and limits")
    func configFile() throws {
        let home = try folder()
        try Data(#"{"marvelBaseURL": "http://127.0.0.1:1/v1/public", "requestTimeoutSeconds": 2.5, "imageCacheMegabytes": 10}"#.utf8)
            .write(to: home.appendingPathComponent("kiosk/config.json"))
        let configuration = try KioskConfiguration.load(environment: ["HOME": "/h", "XDG_CONFIG_HOME": home.path])
        #expect(configuration.sources.marvelBaseURL.absoluteString == "http://127.0.0.1:1/v1/public")
        #expect(configuration.transport.requestTimeout == .milliseconds(2500))
        #expect(configuration.imageDiskLimit == 10_000_000)
        #expect(configuration.explicitlyConfigured == [.marvel])
    }

    @Test("A secrets file is read only when its permissions are 0600, and the environment wins over it")
    func secretsFile() throws {
        let home = try folder()
        let secrets = home.appendingPathComponent("kiosk/secrets.env")
        try Data("# keys\nexport MARVEL_PUBLIC_KEY=pub\nMARVEL_PRIVATE_KEY=\"priv\"\nNYT_API_KEY=fromfile\n".utf8).write(to: secrets)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: secrets.path)
        let environment = ["HOME": "/h", "XDG_CONFIG_HOME": home.path, "NYT_API_KEY": "fromenv"]
        #expect(throws: KioskError.self) { try KioskConfiguration.load(environment: environment) }

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secrets.path)
        let configuration = try KioskConfiguration.load(environment: environment)
        #expect(configuration.sources.marvelPublicKey == "pub")
        #expect(configuration.sources.marvelPrivateKey == "priv")
        #expect(configuration.sources.nytAPIKey == "fromenv")
    }
}
