// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Herald",
    // macOS 15 / iOS 18: swift-configuration's floor (the server reads its settings through it).
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .library(name: "HeraldStore", targets: ["HeraldStore"]),
        .library(name: "HeraldStoreSQLite", targets: ["HeraldStoreSQLite"]),
        .library(name: "HeraldStorePostgres", targets: ["HeraldStorePostgres"]),
        .library(name: "HeraldRelay", targets: ["HeraldRelay"]),
        .library(name: "HeraldServer", targets: ["HeraldServer"]),
        .library(name: "HeraldInbox", targets: ["HeraldInbox"]),
        .executable(name: "herald", targets: ["herald"]),
        // Benchmarks and local fakes of the push services: beside `herald`, never in it (CLI.md).
        .executable(name: "herald-dev", targets: ["herald-dev"]),
        .executable(name: "herald-costs", targets: ["herald-costs"]),
        .library(name: "HeraldTesting", targets: ["HeraldTesting"]),
        // The fuzz targets' entry points, shared by Fuzz/ (libFuzzer) and the replay tests.
        .library(name: "HeraldFuzzing", targets: ["HeraldFuzzing"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.30.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0", traits: ["YAML"]),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.0"),
    ],
    targets: [
        // libsecp256k1 from the system (Debian: libsecp256k1-dev), as GRDB wraps SQLite.
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"])]
        ),
        // Valgrind's callgrind client requests for the instruction-count guard (`herald-costs`); no-ops
        // outside valgrind, and without its headers.
        .target(name: "CCallgrind"),
        // The commit a binary was built from, linked in by `make` (a weak symbol: none after `swift build`).
        .target(name: "CHeraldBuild"),
        // Crypto, keystore and protocol types. No NIO, Hummingbird or GRDB: an iOS app can embed it.
        .target(
            name: "HeraldCore",
            dependencies: [
                "CSecp256k1",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        // The store's contract: protocols by role, records, outcomes, StoreError, and the planner that
        // decides every rule of PROTOCOL §4 once, above the backends. No database engine here.
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldCore",
                // Only to answer a writer's waiters on their own event loop (WaiterHome).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // Each backend is a Service: it runs while the server does and closes at its end.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The embedded default: SQLite through GRDB (WAL), one group-commit writer, migrations, the WAL
        // checkpointer and the writer's thread priority.
        .target(
            name: "HeraldStoreSQLite",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The same store on PostgreSQL (postgres-nio's PostgresClient pool), for several nodes on one
        // database: the database judges replays, limits and outbox claims.
        .target(
            name: "HeraldStorePostgres",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        // The subscriber's message cache (PROTOCOL §6), on SQLite through GRDB.
        .target(
            name: "HeraldInbox",
            dependencies: ["HeraldCore", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: strictSettings
        ),
        // Push delivery: the PushProvider protocol, APNs (HTTP/2, ES256 provider tokens), FCM HTTP v1
        // (OAuth2 from a service account), Web Push and the upstream relay, over AsyncHTTPClient. No store:
        // providers send a PushMessage, and the server maps its outbox rows to one.
        .target(
            name: "HeraldRelay",
            dependencies: [
                "HeraldCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // Web Push resolves endpoint names itself, on NIO's thread pool (PROTOCOL §9).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                // Pushes go as frames on HTTP/2 connections per service and event loop (HTTP2PushClient).
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: strictSettings
        ),
        // Local fakes of APNs (HTTP/2 over TLS, a certificate made at start) and FCM with its OAuth
        // endpoint, checking what Herald sends, for tests, benchmarks and manual trials.
        .target(
            name: "HeraldTesting",
            dependencies: [
                "HeraldCore",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "HeraldFuzzing",
            dependencies: ["HeraldCore", "HeraldInbox", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictSettings
        ),
        // The verifier server: Hummingbird 2 routes, middleware, services.
        .target(
            name: "HeraldServer",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                // Only StoreFactory names the backends.
                "HeraldStoreSQLite",
                "HeraldStorePostgres",
                "HeraldRelay",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        // What both executables share: global options, errors and exit codes, terminal output, progress
        // lines, opening a store, the HTTP client and `main`. Package access only, no product.
        .target(
            name: "HeraldCLISupport",
            dependencies: [
                "CHeraldBuild",
                "HeraldCore",
                "HeraldStore",
                // StoreFactory, the one place that names a store backend.
                "HeraldServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictSettings
        ),
        // The shipped CLI and server. No test code: no HeraldTesting, no swift-certificates, no benchmarks.
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                "HeraldServer",
                "HeraldRelay",
                "HeraldInbox",
                "HeraldCLISupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // `herald-dev bench …` and `herald-dev fake-apns|fake-fcm|fake-webpush`: the benchmarks start the
        // `herald` built beside it for `serve` and `inbox list`.
        .executableTarget(
            name: "herald-dev",
            dependencies: [
                "HeraldCore",
                "HeraldStore",
                "HeraldServer",
                "HeraldInbox",
                "HeraldTesting",
                "HeraldCLISupport",
                "CSecp256k1",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        // The instruction-count guard's fixed workload (scripts/costs/check.sh). Its own executable with a
        // synchronous main: valgrind 3.19 crashes on the `sigsuspend` of an async main's dispatch_main.
        .executableTarget(
            name: "herald-costs",
            dependencies: [
                "HeraldCore", "HeraldStore", "HeraldServer", "HeraldRelay", "CCallgrind",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", "CSecp256k1", "HeraldTesting"],
            resources: [.copy("Vectors")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldInboxTests",
            dependencies: ["HeraldInbox", "HeraldCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldFuzzingTests",
            dependencies: ["HeraldFuzzing"],
            swiftSettings: strictSettings
        ),
        // Both stores in one target, so that one conformance suite runs on each: SQLite always, PostgreSQL
        // on the server named by HERALD_TEST_POSTGRES_URL (scripts/postgres/cluster.sh) when set.
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: [
                "HeraldStore", "HeraldStoreSQLite", "HeraldStorePostgres", "HeraldCore",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldRelayTests",
            dependencies: [
                "HeraldRelay", "HeraldCore", "HeraldTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldServer", "HeraldStore", "HeraldStoreSQLite", "HeraldCore", "HeraldRelay", "HeraldTesting",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: strictSettings
        ),
        // Drives the built `herald` and `herald-dev` binaries; depending on them makes `swift test` build
        // them first.
        .testTarget(
            name: "HeraldCLITests",
            dependencies: [
                "herald", "herald-dev", "HeraldCLISupport", "HeraldCore", "HeraldTesting",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
