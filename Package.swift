// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Herald",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "HeraldCore", targets: ["HeraldCore"]),
        .executable(name: "herald", targets: ["herald"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
    ],
    targets: [
        // libsecp256k1 from the system (Debian: libsecp256k1-dev), as GRDB wraps SQLite.
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"])]
        ),
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
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldCore",
                "CSecp256k1",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HeraldCoreTests",
            dependencies: ["HeraldCore", "CSecp256k1"],
            resources: [.copy("Vectors")],
            swiftSettings: strictSettings
        ),
        // Drives the built `herald` binary; depending on it makes `swift test` build it first.
        .testTarget(
            name: "HeraldCLITests",
            dependencies: ["herald", "HeraldCore"],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
