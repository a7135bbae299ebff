// swift-tools-version: 6.1
import PackageDescription

/// Every module: `any` spelled out; a file uses only the modules it imports itself (MemberImportVisibility);
/// imports are internal unless a public API needs them (`public import`), so each module's import list is
/// its real dependency list.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// Tests read internals with `@testable import`, so only `any` is required of them.
let testSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "kiosk",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kiosk", targets: ["kiosk"]),
        .executable(name: "kiosk-bench", targets: ["kiosk-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // RFC 8941 Structured Fields: Cache-Status (RFC 9211) and, next, the proxy's headers.
        .package(url: "https://github.com/apple/swift-http-structured-headers.git", from: "1.7.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.0.0"),
        // `serve --lan`: the HTTPS listener (NIOSSL) and its self-signed certificate (X509).
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // The transport's HTTP/2 to upstreams that offer it.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        // zlib: HAR exports decode gzip and deflate bodies; and the PNG decoder of KioskDemoUpstreamTests.
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        .target(name: "KioskCore",
                dependencies: [.product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers"),
                               // A body in a content coding, decoded to be shown and to be redacted (ContentCoding.swift).
                               .product(name: "CompressNIO", package: "compress-nio"),
                               .product(name: "NIOCore", package: "swift-nio")],
                swiftSettings: swiftSettings),
        .target(
            name: "KioskNetwork",
            dependencies: [
                "KioskCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                // Reading an upstream's certificate for what BoringSSL lets pass (CertificateStrength.swift).
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskStore",
            dependencies: ["KioskCore", .product(name: "GRDB", package: "GRDB.swift"),
                           // SHA-256 identifies the request log's bodies, stored once however many records carry them.
                           .product(name: "Crypto", package: "swift-crypto"),
                           // The proxy cache's lookup uses SQLite directly (ProxyCache+Lookup.swift says why).
                           .product(name: "GRDBSQLite", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskSources",
            dependencies: ["KioskCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskDebugger",
            dependencies: ["KioskCore", "KioskStore",
                           // The reason phrases of HTTP's registered statuses, for HAR's statusText.
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskApp",
            dependencies: ["KioskCore", "KioskNetwork", "KioskStore", "KioskSources", "KioskDebugger",
                           .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // What every listener of Kiosk shares: the Host and peer guard, and the request head deadline.
        .target(
            name: "KioskListener",
            dependencies: [
                "KioskCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskDemoUpstream",
            dependencies: [
                "KioskCore", "KioskListener",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskWeb",
            dependencies: [
                "KioskCore", "KioskApp", "KioskDebugger", "KioskListener",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.process("Resources")],
            swiftSettings: swiftSettings
        ),
        // The network debugger's console: a feature of the web app, beside the reader.
        .target(
            name: "KioskConsole",
            dependencies: [
                "KioskCore", "KioskApp", "KioskDebugger", "KioskWeb",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.process("Resources")],
            swiftSettings: swiftSettings
        ),
        // `kiosk proxy`: the listener apps send their requests to (absolute-form HTTP), each forwarded through Kiosk's
        // debugger. On NIO's own HTTP/1 parts, which keep the request line's absolute URI.
        .target(
            name: "KioskProxy",
            dependencies: [
                "KioskCore", "KioskListener", "KioskNetwork",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "kiosk",
            dependencies: [
                "KioskCore", "KioskApp", "KioskDebugger", "KioskDemoUpstream", "KioskWeb", "KioskConsole", "KioskProxy", "KioskNetwork",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "kiosk-bench",
            dependencies: ["KioskCore", "KioskApp", "KioskDebugger", "KioskStore", "KioskSources", "KioskNetwork", "KioskDemoUpstream", "KioskWeb",
                           "KioskConsole", "KioskProcess", "KioskProxy",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "NIOTLS", package: "swift-nio"),
                           .product(name: "UnixSignals", package: "swift-service-lifecycle")],
            swiftSettings: swiftSettings
        ),
        // Child processes started with posix_spawn, for the tests and the benchmark that run the kiosk binary.
        .target(name: "KioskProcess", swiftSettings: swiftSettings),
        // What the test targets share: the test clock, the scripted transport, temporary folders, the MD5
        // oracle, the JSON fixtures and the harness (a demo upstream and a Kiosk over it). Not a product, and no production target may depend on it.
        .target(
            name: "KioskTestSupport",
            dependencies: ["KioskCore", "KioskApp", "KioskDemoUpstream", "KioskNetwork", "KioskStore",
                           .product(name: "Crypto", package: "swift-crypto")],
            path: "Tests/KioskTestSupport",
            resources: [.copy("Fixtures")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(name: "KioskTestSupportTests", dependencies: ["KioskTestSupport", "KioskCore", "KioskProcess"], swiftSettings: testSwiftSettings),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskProcess", "KioskCore"], swiftSettings: testSwiftSettings),
        .testTarget(name: "KioskNetworkTests", dependencies: ["KioskNetwork", "KioskCore", "KioskTestSupport",
                                                              .product(name: "AsyncHTTPClient", package: "async-http-client"),
                                                              .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                                                              .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                                                              .product(name: "NIOCore", package: "swift-nio")],
                    swiftSettings: testSwiftSettings),
        .testTarget(name: "KioskStoreTests", dependencies: ["KioskProcess", "KioskStore", "KioskCore", "KioskDebugger", "KioskTestSupport",
                                                            .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: testSwiftSettings),
        .testTarget(name: "KioskSourcesTests", dependencies: ["KioskSources", "KioskCore", "KioskTestSupport"], swiftSettings: testSwiftSettings),
        .testTarget(name: "KioskDebuggerTests", dependencies: ["KioskProcess", "KioskDebugger", "KioskCore", "KioskSources", "KioskTestSupport"],
                    swiftSettings: testSwiftSettings),
        .testTarget(
            name: "KioskAppTests",
            dependencies: ["KioskApp", "KioskCore", "KioskNetwork", "KioskSources", "KioskStore", "KioskTestSupport",
                           .product(name: "Crypto", package: "swift-crypto"), .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "KioskDemoUpstreamTests",
            dependencies: ["KioskDemoUpstream", "KioskCore", "KioskTestSupport",
                           .product(name: "CompressNIO", package: "compress-nio"),
                           .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "KioskProxyTests",
            dependencies: ["KioskProcess", "KioskProxy", "KioskApp", "KioskCore", "KioskDebugger", "KioskDemoUpstream", "KioskTestSupport",
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "NIOTLS", package: "swift-nio"),
                           .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                           .product(name: "NIOHPACK", package: "swift-nio-http2"),
                           .product(name: "X509", package: "swift-certificates"),
                           .product(name: "SwiftASN1", package: "swift-asn1"),
                           .product(name: "Crypto", package: "swift-crypto"),
                           // RSA keys, for upstream certificates too weak to trust.
                           .product(name: "_CryptoExtras", package: "swift-crypto"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio"),
                           .product(name: "NIOEmbedded", package: "swift-nio"),
                           .product(name: "NIOWebSocket", package: "swift-nio")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "KioskWebTests",
            dependencies: ["KioskProcess", "KioskWeb", "KioskConsole", "KioskApp", "KioskCore", "KioskDebugger", "KioskDemoUpstream", "KioskSources", "KioskStore",
                           "KioskTestSupport",
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "HummingbirdTesting", package: "hummingbird"),
                           .product(name: "HTTPTypes", package: "swift-http-types"),
                           // The HTTPS tests: a client that trusts the generated certificate, and the certificate parsed.
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "X509", package: "swift-certificates"),
                           .product(name: "Crypto", package: "swift-crypto"),
                           // The listener tests: raw connections and the HTTP/1 types AsyncHTTPClient speaks.
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOHTTP1", package: "swift-nio")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["KioskApp", "KioskDebugger", "KioskDemoUpstream", "KioskStore", "KioskNetwork", "KioskSources", "KioskCore",
                           "KioskTestSupport", "KioskProcess", "KioskProxy", .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: testSwiftSettings
        ),
    ]
)
