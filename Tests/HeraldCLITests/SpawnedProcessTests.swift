import Foundation
import HeraldTesting
import Testing

/// The spawner every test child goes through: what `Process` did for them, it must do too.
@Suite struct SpawnedProcessTests {
    private static func shell(_ script: String, environment: [String: String]? = nil) -> SpawnedProcess {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = environment
        return process
    }

    @Test func itPassesArgumentsEnvironmentAndStandardInputAndReportsTheExitCode() throws {
        let process = Self.shell(
            #"read line; printf '%s|%s|%s' "$line" "$GREETING" "$0" >&2; exit 7"#, environment: ["GREETING": "hé"])
        process.arguments?.append("zeroth")
        let input = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardError = errors
        try process.run()
        let drain = PipeDrain(errors)
        input.fileHandleForWriting.write(Data("from stdin\n".utf8))
        try input.fileHandleForWriting.close()
        let text = String(decoding: drain.waitForEnd(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text == "from stdin|hé|zeroth")
        #expect(process.terminationStatus == 7)
        #expect(!process.wasSignalled)
        #expect(!process.isRunning)
    }

    @Test func aSignalledChildReportsTheSignal() async throws {
        let process = Self.shell("exec sleep 30")
        try process.run()
        #expect(process.isRunning)
        process.terminate()
        process.waitUntilExit()
        #expect(process.wasSignalled)
        #expect(process.terminationStatus == SIGTERM)
        #expect(!process.isRunning)
    }

    /// A child must not keep another pipe of the parent's open: a reader of that pipe would wait for it.
    @Test func theChildHoldsNoDescriptorOfTheParentsBeyondItsStreams() throws {
        let unrelated = Pipe()
        let output = Pipe()
        let process = Self.shell("ls /proc/self/fd")
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let listed = String(decoding: PipeDrain(output).waitForEnd(), as: UTF8.self)
        process.waitUntilExit()
        let descriptors = Set(listed.split(separator: "\n").compactMap { Int32($0) })
        // 0, 1, 2, and the one `ls` opened to read the folder.
        #expect(descriptors.count == 4, "\(descriptors)")
        #expect(!descriptors.contains(unrelated.fileHandleForWriting.fileDescriptor))
        #expect(process.terminationStatus == 0)
    }

    @Test func aMissingExecutableIsAThrownError() {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/nonexistent/herald")
        #expect(throws: SpawnedProcess.SpawnFailure.self) { try process.run() }
        #expect(!process.isRunning)
    }
}
