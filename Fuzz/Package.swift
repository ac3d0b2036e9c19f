// swift-tools-version:6.1
// Coverage-guided fuzzing of Herald's parsers with libFuzzer. A package of its own, so that the main
// build never links the fuzzer driver: `make fuzz` builds it with AddressSanitizer and coverage
// instrumentation in `.build-fuzz` (see scripts/fuzz/run.sh).
import PackageDescription

let package = Package(
    name: "HeraldFuzz",
    dependencies: [.package(name: "Herald", path: "..")],
    targets: [
        .executableTarget(
            name: "herald-fuzz",
            dependencies: [.product(name: "HeraldFuzzing", package: "Herald")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
