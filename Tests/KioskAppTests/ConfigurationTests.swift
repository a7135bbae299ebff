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

    @Test("A catalog given its real base URL while the others stay on the demo stores into a file of that mix, never the demo's; the debugger's files stay the demo's")
    func mixedStore() throws {
        let home = ["HOME": "/home/u", "XDG_CONFIG_HOME": "/nonexistent", "XDG_DATA_HOME": "/data"]
        // Given Rick and Morty's real API (no key needed) and the other catalogs on the demo
        var mixed = try KioskConfiguration.load(environment: home.merging(["KIOSK_RICKANDMORTY_BASE_URL": "http://127.0.0.1:9999/api"]) { $1 })
        mixed.useStore(live: false)
        // Then its items go to a store of their own mix, not kiosk-demo.sqlite, where the demo's character 1 is
        #expect(mixed.databaseURL.lastPathComponent == "kiosk-demo-with-rickandmorty.sqlite")
        // And the request log, rules and mocks are the demo's as before
        #expect(mixed.requestLogURL.lastPathComponent == "kiosk-demo-log.sqlite")
        #expect(mixed.rewriteRulesURL.lastPathComponent == "kiosk-demo-rules.json")
        // And two real catalogs name both, in the catalogs' order
        var two = try KioskConfiguration.load(environment: home.merging(["KIOSK_DOGS_URL": "http://127.0.0.1:1/dogs.json",
                                                                          "KIOSK_NYT_BASE_URL": "http://127.0.0.1:1/svc"]) { $1 })
        two.useStore(live: false)
        #expect(two.databaseURL.lastPathComponent == "kiosk-demo-with-nyt-dogs.sqlite")
        // And none given, or --live, keep the two stores they always had
        var demo = try KioskConfiguration.load(environment: home)
        demo.useStore(live: false)
        #expect(demo.databaseURL.lastPathComponent == "kiosk-demo.sqlite" && demo.requestLogURL.lastPathComponent == "kiosk-demo-log.sqlite")
        var live = try KioskConfiguration.load(environment: home.merging(["KIOSK_RICKANDMORTY_BASE_URL": "http://127.0.0.1:9999/api"]) { $1 })
        live.useStore(live: true)
        #expect(live.databaseURL.lastPathComponent == "kiosk.sqlite" && live.requestLogURL.lastPathComponent == "kiosk-log.sqlite")
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

    @Test("A config file with a mistake is refused with a sentence naming the setting, never applied in part or changed",
          arguments: [
            (#"{"requestTimeoutSeconds": 99999}"#, "requestTimeoutSeconds must be from 0.1 to 3600.0 seconds, not 99999.0"),
            (#"{"syncConcurrency": 0}"#, "syncConcurrency must be from 1 to 32 requests, not 0"),
            (#"{"imageCacheMegabytes": -5}"#, "imageCacheMegabytes must be from 0 to 1000000 MB, not -5"),
            (#"{"requestTimeout": 5}"#, #"it has no setting "requestTimeout""#),
            (#"{"capture": "no"}"#, "capture must be true or false"),
            (#"{"syncConcurrency": 4,"#, "it is not valid JSON"),
          ])
    func configFileMistakes(text: String, reason: String) throws {
        // Given a config file with one mistake
        let home = try folder()
        try Data(text.utf8).write(to: home.appendingPathComponent("kiosk/config.json"))
        // When Kiosk loads it, then it is refused, saying which setting and why, in words
        do {
            _ = try KioskConfiguration.load(environment: ["HOME": "/h", "XDG_CONFIG_HOME": home.path])
            Issue.record("loaded \(text)")
        } catch let error as KioskError {
            #expect(error.description.contains(reason), "\(error.description)")
            #expect(!error.description.contains("correct format"))
        }
    }

    @Test("A config file that exists and cannot be read is an error, not skipped")
    func unreadableConfigFile() throws {
        // Given a folder where the config file should be
        let home = try folder()
        try FileManager.default.createDirectory(at: home.appendingPathComponent("kiosk/config.json"), withIntermediateDirectories: true)
        // Then loading says it cannot be read
        #expect(throws: KioskError.self) { try KioskConfiguration.load(environment: ["HOME": "/h", "XDG_CONFIG_HOME": home.path]) }
        // And with no file at all, the defaults
        #expect(try KioskConfiguration.load(environment: ["HOME": "/h", "XDG_CONFIG_HOME": home.appendingPathComponent("none").path])
            .syncConcurrency == KioskConfiguration(dataDirectory: home).syncConcurrency)
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
