public import Foundation
public import KioskCore
public import KioskNetwork
public import KioskSources

/// Everything Kiosk can be configured with: where data lives, which upstreams to read, keys, limits.
/// Built from defaults, then an optional JSON config file, then the environment (later wins).
public struct KioskConfiguration: Sendable {
    /// Folder holding `kiosk.sqlite`.
    public var dataDirectory: URL
    /// Base URLs, keys and clock for the four sources.
    public var sources: SourceConfiguration
    /// Connect and request timeouts.
    public var transport: TransportConfiguration
    /// Retries for GETs.
    public var retry: RetryPolicy
    /// Disk budget of the image cache, in bytes (default 200 MB).
    public var imageDiskLimit: Int
    /// Memory budget of the image cache, in bytes (default 64 MB).
    public var imageMemoryLimit: Int
    /// Pages fetched at once by `sync`.
    public var syncConcurrency: Int
    /// Which sources were given an explicit base URL (the rest may use the demo upstream).
    public var explicitlyConfigured: Set<SourceID>

    /// The database file's name: `kiosk.sqlite` for real upstreams. Data from the embedded demo
    /// upstream goes to `kiosk-demo.sqlite`, so demo and real items, favorites and edits never mix
    /// (`useStore(live:)` chooses).
    public var databaseName = "kiosk.sqlite"

    /// The name the debugger's files (request log, mocks, rules, breakpoints, proxy cache) start with: `kiosk`, or
    /// `kiosk-demo` for any run on the demo upstream; nil takes the database's name.
    public var companionPrefix: String?

    /// Chooses the files for a run with `live` set: every catalog on its real upstream, `kiosk.sqlite`; none given a
    /// base URL, `kiosk-demo.sqlite`; some given one (Rick and Morty's real API needs no key), a store of that mix,
    /// `kiosk-demo-with-rickandmorty.sqlite`, so a catalog's demo items and its real ones never share a file (the same
    /// ids would pass one for the other). The debugger's files follow demo or real, whatever the mix.
    public mutating func useStore(live: Bool) {
        guard usesDemoUpstream(live: live) else { return }
        let real = SourceID.allCases.filter(explicitlyConfigured.contains).map(\.rawValue)
        databaseName = real.isEmpty ? "kiosk-demo.sqlite" : "kiosk-demo-with-\(real.joined(separator: "-")).sqlite"
        companionPrefix = "kiosk-demo"
    }

    /// The database file inside the data directory.
    public var databaseURL: URL { dataDirectory.appendingPathComponent(databaseName) }

    /// The network debugger's capture: on by default, redacted at capture, bounded.
    public var capture = CaptureConfiguration()

    /// The request log's own file beside the database (`kiosk-log.sqlite`, `kiosk-demo-log.sqlite`), so
    /// logging never contends with the catalog store and demo traffic never mixes with real traffic.
    public var requestLogURL: URL { besideDatabase("-log.sqlite") }

    /// The network debugger's mock rules beside the database (`kiosk-mocks.json`, `kiosk-demo-mocks.json`).
    public var mockRulesURL: URL { besideDatabase("-mocks.json") }

    /// The network debugger's rewrite rules beside the database (`kiosk-rules.json`, `kiosk-demo-rules.json`).
    public var rewriteRulesURL: URL { besideDatabase("-rules.json") }

    /// The network debugger's breakpoint switches beside the database (`kiosk-breakpoints.json`...).
    public var breakpointsURL: URL { besideDatabase("-breakpoints.json") }

    /// A file in the data directory named after the database: `kiosk` + `suffix` for `kiosk.sqlite`.
    private func besideDatabase(_ suffix: String) -> URL {
        let base = companionPrefix
            ?? (databaseName.hasSuffix(".sqlite") ? String(databaseName.dropLast(".sqlite".count)) : databaseName)
        return dataDirectory.appendingPathComponent(base + suffix)
    }

    /// `kiosk proxy`'s cache of apps' answers; nil (every other command) opens no cache file.
    public var proxyCache: ProxyCacheConfiguration?

    /// `kiosk proxy`'s cache file beside the database (`kiosk-proxy-cache.sqlite`, `kiosk-demo-proxy-cache.sqlite`).
    public var proxyCacheURL: URL { besideDatabase("-proxy-cache.sqlite") }

    /// The wire of `kiosk proxy`: apps' requests pass as they are (bytes and encodings untouched), may take a
    /// minute upstream, and are held whole up to 16 MB each, 256 MB in all (`HeldBodies`: past it they stream on).
    public var proxyTransport = {
        var transport = TransportConfiguration(requestTimeout: .seconds(60), maximumBodyBytes: 16 << 20, passesThrough: true)
        transport.heldBodies = HeldBodies(capacity: 256 << 20)
        return transport
    }()

    /// How long a request paused at a breakpoint waits for a decision before it continues unchanged.
    public var breakpointTimeout: Duration = .seconds(300)

    /// How long an item's view waits for the items it links to (a character's episodes) that are not stored: past it,
    /// the item is shown without them, and they go on loading behind, stored for its next view.
    public var linkedItemsPatience: Duration = .seconds(3)

    /// Whether breakpoints pause: on where a console can decide (`kiosk serve`), off for one-shot commands.
    public var breakpointsActive = true

    /// The redactor for everything Kiosk records: the standard names and headers, any configured
    /// extra ones, and the configured keys' values wherever they appear.
    public var redactor: Redactor {
        var redactor = Redactor.standard
        redactor.queryItems.formUnion(capture.extraRedactedQueryItems.map { $0.lowercased() })
        redactor.headers.formUnion(capture.extraRedactedHeaders.map { $0.lowercased() })
        return redactor.hiding([sources.nytAPIKey, sources.marvelPublicKey, sources.marvelPrivateKey].compactMap { $0 })
    }

    /// Points every catalog not configured explicitly at `upstream`, whose canonical origin (what stored
    /// data names) is reached at `listener` (as curl's `--connect-to`).
    public mutating func use(_ upstream: UpstreamEndpoints, connecting canonical: Origin?, to listener: Origin?) {
        if let canonical, let listener { transport.connectOverrides[canonical] = listener }
        if !explicitlyConfigured.contains(.nyt) {
            sources.nytBaseURL = upstream.nytBaseURL
            sources.nytAPIKey = upstream.nytAPIKey
        }
        if !explicitlyConfigured.contains(.marvel) {
            sources.marvelBaseURL = upstream.marvelBaseURL
            sources.marvelPublicKey = upstream.marvelPublicKey
            sources.marvelPrivateKey = upstream.marvelPrivateKey
        }
        if !explicitlyConfigured.contains(.rickandmorty) { sources.rickAndMortyBaseURL = upstream.rickAndMortyBaseURL }
        if !explicitlyConfigured.contains(.dogs) { sources.dogsURL = upstream.dogsURL }
    }

    /// Whether a run with `live` set would need the embedded demo upstream for some source.
    public func usesDemoUpstream(live: Bool) -> Bool {
        !live && explicitlyConfigured.count < SourceID.allCases.count
    }

    public init(dataDirectory: URL, sources: SourceConfiguration = .live,
                transport: TransportConfiguration = TransportConfiguration(), retry: RetryPolicy = RetryPolicy(),
                imageDiskLimit: Int = 200_000_000, imageMemoryLimit: Int = 64_000_000, syncConcurrency: Int = 6,
                explicitlyConfigured: Set<SourceID> = []) {
        self.dataDirectory = dataDirectory
        self.sources = sources
        self.transport = transport
        self.retry = retry
        self.imageDiskLimit = imageDiskLimit
        self.imageMemoryLimit = imageMemoryLimit
        self.syncConcurrency = syncConcurrency
        self.explicitlyConfigured = explicitlyConfigured
    }

    /// The JSON config file's shape; every field optional.
    /// The config file's bytes; nil when there is none (and none was named); throws saying why one cannot be read.
    private static func configFileData(_ url: URL, required: Bool) throws -> Data? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno
            if reason == ENOENT && !required { return nil }
            throw KioskError.invalidRequest("Cannot read the config file \(url.path): \(String(cString: strerror(reason)))")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            // A folder opens, and fails at the first read.
            throw KioskError.invalidRequest("Cannot read the config file \(url.path): it is not a file")
        }
    }

    struct File: Decodable {
        var nytBaseURL: URL?
        var marvelBaseURL: URL?
        var rickAndMortyBaseURL: URL?
        var dogsURL: URL?
        var connectTimeoutSeconds: Double?
        var requestTimeoutSeconds: Double?
        var imageCacheMegabytes: Int?
        var syncConcurrency: Int?
        var capture: Bool?
        var captureBodyLimitBytes: Int?
        var logMaxMegabytes: Int?
        var logMaxDays: Double?
        var redactQueryItems: [String]?
        var redactHeaders: [String]?
        var breakpointTimeoutSeconds: Double?
        var proxy: String?
        var noProxy: [String]?
        var proxyLoopback: Bool?

        /// Every setting's name, as the file spells it.
        static let names: Set<String> = ["nytBaseURL", "marvelBaseURL", "rickAndMortyBaseURL", "dogsURL", "connectTimeoutSeconds",
                                         "requestTimeoutSeconds", "imageCacheMegabytes", "syncConcurrency", "capture",
                                         "captureBodyLimitBytes", "logMaxMegabytes", "logMaxDays", "redactQueryItems", "redactHeaders",
                                         "breakpointTimeoutSeconds", "proxy", "noProxy", "proxyLoopback"]

        /// The file at `path` read from `data`; throws a sentence naming the setting a mistake is in. A name Kiosk does
        /// not know is refused rather than skipped: a misspelt setting would otherwise be silently not applied.
        static func decode(_ data: Data, path: String) throws -> File {
            let file: File
            do {
                file = try JSONDecoder().decode(File.self, from: data)
            } catch let error as DecodingError {
                throw KioskError.invalidRequest("Cannot use the config file \(path): \(error.readableDescription(root: "it"))")
            }
            let keys = (try? JSONSerialization.jsonObject(with: data) as? [String: Any]).map { Set($0.keys) } ?? []
            if let unknown = keys.subtracting(names).sorted().first {
                throw KioskError.invalidRequest("Cannot use the config file \(path): it has no setting \"\(unknown)\" "
                                                + "(the settings are \(names.sorted().joined(separator: ", ")))")
            }
            return file
        }
    }

    /// Loads the configuration: `--data-dir` (or `$XDG_DATA_HOME/kiosk`, else `~/.local/share/kiosk`),
    /// `$XDG_CONFIG_HOME/kiosk/config.json` (or `KIOSK_CONFIG`), `KIOSK_*` base URLs and the keys from the
    /// environment or a secrets file (`KIOSK_SECRETS` or `$XDG_CONFIG_HOME/kiosk/secrets.env`, which must be 0600).
    public static func load(environment: [String: String] = ProcessInfo.processInfo.environment,
                            dataDirectory: String? = nil) throws -> KioskConfiguration {
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? home.appendingPathComponent(".local/share")
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? home.appendingPathComponent(".config")
        let directory = dataDirectory.map { URL(fileURLWithPath: $0) } ?? dataHome.appendingPathComponent("kiosk")
        var configuration = KioskConfiguration(dataDirectory: directory)

        let configPath = environment["KIOSK_CONFIG"].map { URL(fileURLWithPath: $0) }
            ?? configHome.appendingPathComponent("kiosk/config.json")
        if let data = try Self.configFileData(configPath, required: environment["KIOSK_CONFIG"] != nil) {
            try configuration.apply(File.decode(data, path: configPath.path))
        }

        let secretsPath = environment["KIOSK_SECRETS"].map { URL(fileURLWithPath: $0) }
            ?? configHome.appendingPathComponent("kiosk/secrets.env")
        let secrets = try Secrets.read(secretsPath, required: environment["KIOSK_SECRETS"] != nil)
        let merged = secrets.merging(environment) { _, fromEnvironment in fromEnvironment }
        try configuration.applyEnvironment(merged)
        return configuration
    }

    /// `value` when it lies within `range`; else throws a sentence naming the setting, the range and what was given.
    private static func setting<Value: Comparable>(_ name: String, _ value: Value, within range: ClosedRange<Value>, _ unit: String) throws -> Value {
        guard range.contains(value) else {
            throw KioskError.invalidRequest("The config file's \(name) must be from \(range.lowerBound) to \(range.upperBound) \(unit), not \(value)")
        }
        return value
    }

    /// `text` as a base URL, when it is an http(s) URL with a host; else throws a sentence saying that `name` must be one.
    private static func baseURL(_ text: String, _ name: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = url.host, !host.isEmpty else {
            throw KioskError.invalidRequest("\(name) must be an http(s) URL, got \"\(text)\"")
        }
        return url
    }

    mutating func apply(_ file: File) throws {
        // A base URL the environment would refuse is refused from the file too, before anything is opened or stored.
        func url(_ url: URL?, _ name: String) throws -> URL? { try url.map { try Self.baseURL($0.absoluteString, "The config file's \(name)") } }
        if let url = try url(file.nytBaseURL, "nytBaseURL") { sources.nytBaseURL = url; explicitlyConfigured.insert(.nyt) }
        if let url = try url(file.marvelBaseURL, "marvelBaseURL") { sources.marvelBaseURL = url; explicitlyConfigured.insert(.marvel) }
        if let url = try url(file.rickAndMortyBaseURL, "rickAndMortyBaseURL") {
            sources.rickAndMortyBaseURL = url
            explicitlyConfigured.insert(.rickandmorty)
        }
        if let url = try url(file.dogsURL, "dogsURL") { sources.dogsURL = url; explicitlyConfigured.insert(.dogs) }
        // Out-of-range numbers are refused, naming the setting, rather than trusted (a huge timeout would overflow, a
        // negative cache size would make every image save fail) or quietly changed.
        if let seconds = file.connectTimeoutSeconds {
            transport.connectTimeout = .milliseconds(Int(try Self.setting("connectTimeoutSeconds", seconds, within: 0.1...600, "seconds") * 1000))
        }
        if let seconds = file.requestTimeoutSeconds {
            transport.requestTimeout = .milliseconds(Int(try Self.setting("requestTimeoutSeconds", seconds, within: 0.1...3600, "seconds") * 1000))
        }
        if let megabytes = file.imageCacheMegabytes {
            imageDiskLimit = try Self.setting("imageCacheMegabytes", megabytes, within: 0...1_000_000, "MB") * 1_000_000
        }
        if let concurrency = file.syncConcurrency { syncConcurrency = try Self.setting("syncConcurrency", concurrency, within: 1...32, "requests") }
        if let enabled = file.capture { capture.isEnabled = enabled }
        if let limit = file.captureBodyLimitBytes { capture.bodyLimit = try Self.setting("captureBodyLimitBytes", limit, within: 0...(64 << 20), "bytes") }
        if let megabytes = file.logMaxMegabytes {
            capture.logMaxBytes = Int64(try Self.setting("logMaxMegabytes", megabytes, within: 1...100_000, "MB")) << 20
        }
        if let days = file.logMaxDays { capture.logMaxAge = try Self.setting("logMaxDays", days, within: 0.001...3650, "days") * 86400 }
        // Only additions: the standard secrets cannot be switched off by a config file.
        if let names = file.redactQueryItems { capture.extraRedactedQueryItems = names }
        if let names = file.redactHeaders { capture.extraRedactedHeaders = names }
        if let seconds = file.breakpointTimeoutSeconds {
            breakpointTimeout = .milliseconds(Int(try Self.setting("breakpointTimeoutSeconds", seconds, within: 1...86_400, "seconds") * 1000))
        }
        if let proxy = file.proxy, !proxy.isEmpty {
            let url = try ProxySettings.proxyURL(proxy, setting: "proxy")
            transport.proxy.httpProxy = url
            transport.proxy.httpsProxy = url
        }
        if let noProxy = file.noProxy { transport.proxy.noProxy = noProxy.flatMap(ProxySettings.list) }
        if let loopback = file.proxyLoopback { transport.proxy.proxyLoopback = loopback }
    }

    mutating func applyEnvironment(_ environment: [String: String]) throws {
        func url(_ name: String) throws -> URL? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return try Self.baseURL(text, name)
        }
        if let value = try url("KIOSK_NYT_BASE_URL") { sources.nytBaseURL = value; explicitlyConfigured.insert(.nyt) }
        if let value = try url("KIOSK_MARVEL_BASE_URL") { sources.marvelBaseURL = value; explicitlyConfigured.insert(.marvel) }
        if let value = try url("KIOSK_RICKANDMORTY_BASE_URL") {
            sources.rickAndMortyBaseURL = value
            explicitlyConfigured.insert(.rickandmorty)
        }
        if let value = try url("KIOSK_DOGS_URL") { sources.dogsURL = value; explicitlyConfigured.insert(.dogs) }
        // The proxy variables everybody sets win over the config file's, each on its own.
        let proxy = try ProxySettings.fromEnvironment(environment)
        if let url = proxy.httpProxy { transport.proxy.httpProxy = url }
        if let url = proxy.httpsProxy { transport.proxy.httpsProxy = url }
        if environment["NO_PROXY"] != nil || environment["no_proxy"] != nil { transport.proxy.noProxy = proxy.noProxy }
        if environment["KIOSK_PROXY_LOOPBACK"] != nil { transport.proxy.proxyLoopback = proxy.proxyLoopback }
        if let key = environment["NYT_API_KEY"], !key.isEmpty { sources.nytAPIKey = try Self.apiKey("NYT_API_KEY", key) }
        if let key = environment["MARVEL_PUBLIC_KEY"], !key.isEmpty { sources.marvelPublicKey = try Self.apiKey("MARVEL_PUBLIC_KEY", key) }
        if let key = environment["MARVEL_PRIVATE_KEY"], !key.isEmpty { sources.marvelPrivateKey = try Self.apiKey("MARVEL_PRIVATE_KEY", key) }
    }

    /// The key `value` set as `name`, refused when it holds a space or a control character (a line break pasted with
    /// it): API keys are printable characters, and one that is not would go out, and come back in an echo or an ETag,
    /// changed (`\n` as a space, a space as `+`) where redaction, which looks for the key as set, would not find it.
    static func apiKey(_ name: String, _ value: String) throws -> String {
        guard value.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw KioskError.invalidRequest("\(name) holds a space, a line break or another control character (pasted with "
                                            + "the key?): an API key is printable characters only; set it again without them")
        }
        return value
    }
}

/// What the network debugger records and for how long.
public struct CaptureConfiguration: Sendable, Hashable {
    /// Whether upstream exchanges are recorded at all.
    public var isEnabled = true
    /// The most bytes kept of each body (1 MB); the rest is dropped and the record marked truncated.
    public var bodyLimit = 1 << 20
    /// The request log's size bound (50 MB), oldest records evicted first.
    public var logMaxBytes: Int64 = 50 << 20
    /// The request log's age bound (7 days).
    public var logMaxAge: TimeInterval = 7 * 86400
    /// Query items redacted on top of the standard ones (`api-key`, `apikey`, `hash`, `ts`).
    public var extraRedactedQueryItems: [String] = []
    /// Headers redacted on top of the standard ones (Authorization, Cookie, Set-Cookie...).
    public var extraRedactedHeaders: [String] = []

    public init() {}
}

/// Reads `KEY=VALUE` lines from a secrets file that only its owner may read.
enum Secrets {
    static func read(_ url: URL, required: Bool) throws -> [String: String] {
        let manager = FileManager.default
        guard manager.fileExists(atPath: url.path) else {
            if required { throw KioskError.invalidRequest("The secrets file \(url.path) does not exist") }
            return [:]
        }
        let attributes = try manager.attributesOfItem(atPath: url.path)
        let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        guard permissions & 0o077 == 0 else {
            throw KioskError.invalidRequest(
                "Refusing to read \(url.path): its permissions are \(String(permissions, radix: 8)); run chmod 600 on it")
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") else { continue }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
                .replacingOccurrences(of: "export ", with: "")
            var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, let first = value.first, first == value.last, first == "\"" || first == "'" {
                value = String(value.dropFirst().dropLast())
            }
            values[key] = value
        }
        return values
    }
}
