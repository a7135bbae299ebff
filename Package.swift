// swift-tools-version: 6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
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
    ],
    targets: [
        .target(name: "KioskCore", swiftSettings: swiftSettings),
        .target(
            name: "KioskNetwork",
            dependencies: [
                "KioskCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskStore",
            dependencies: ["KioskCore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskSources",
            dependencies: ["KioskCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskApp",
            dependencies: ["KioskCore", "KioskNetwork", "KioskStore", "KioskSources",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskDemoUpstream",
            dependencies: [
                "KioskCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KioskWeb",
            dependencies: [
                "KioskCore", "KioskNetwork", "KioskApp", "KioskStore",
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            resources: [.process("Resources")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "kiosk",
            dependencies: [
                "KioskCore", "KioskApp", "KioskDemoUpstream", "KioskSources", "KioskWeb",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "kiosk-bench",
            dependencies: ["KioskCore", "KioskApp", "KioskStore", "KioskSources", "KioskNetwork", "KioskDemoUpstream", "KioskWeb",
                           .product(name: "AsyncHTTPClient", package: "async-http-client"),
                           .product(name: "Hummingbird", package: "hummingbird"),
                           .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore"], swiftSettings: swiftSettings),
        .testTarget(name: "KioskNetworkTests", dependencies: ["KioskNetwork", "KioskDemoUpstream"], swiftSettings: swiftSettings),
        .testTarget(name: "KioskStoreTests", dependencies: ["KioskStore", "KioskCore"], swiftSettings: swiftSettings),
        .testTarget(name: "KioskSourcesTests", dependencies: ["KioskSources"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KioskDemoUpstreamTests",
            dependencies: ["KioskDemoUpstream", .product(name: "HummingbirdTesting", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KioskWebTests",
            dependencies: ["KioskWeb", "KioskApp", "KioskDemoUpstream", "KioskSources", "KioskStore", "KioskNetwork",
                           .product(name: "HummingbirdTesting", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["KioskApp", "KioskDemoUpstream", "KioskStore", "KioskNetwork", "KioskSources", "KioskCore",
                           .product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
    ]
)
