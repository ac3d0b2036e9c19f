import Foundation
import HeraldFuzzing

enum Selection {
    /// The target this process fuzzes (`HERALD_FUZZ_TARGET`), read once.
    static let target = FuzzTarget(rawValue: ProcessInfo.processInfo.environment["HERALD_FUZZ_TARGET"] ?? "")
}

// libFuzzer's driver, linked from clang's `libclang_rt.fuzzer_no_main` (scripts/fuzz/run.sh): the
// package keeps its own `main`, which SwiftPM requires of an executable, and hands over to it.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

guard Selection.target != nil else {
    FileHandle.standardError.write(
        Data("set HERALD_FUZZ_TARGET to one of: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
    exit(64)
}
var count = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&count, &arguments) { data, size in
        Selection.target?.run(UnsafeBufferPointer(start: data, count: size))
        return 0
    })
