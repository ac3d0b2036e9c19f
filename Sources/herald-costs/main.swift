import CCallgrind
import Dispatch
import Foundation

// herald-costs [REGISTRATIONS] [SUBSCRIBERS]: the instruction-count guard's fixed workload (CostsWorkload).
// Run alone it prints each phase's µs per operation; scripts/costs/check.sh runs it under callgrind and
// compares the instructions with scripts/costs/budgets.json. A synchronous main (a task and a semaphore):
// valgrind 3.19 dies on the `sigsuspend` with which an async main parks its main thread.
let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
guard arguments.count <= 2, arguments.allSatisfy({ ($0 ?? 0) >= 1 }) else {
    FileHandle.standardError.write(Data("usage: herald-costs [REGISTRATIONS ≥ 1] [SUBSCRIBERS ≥ 1]\n".utf8))
    exit(64)
}
let registrations = arguments.first.flatMap { $0 } ?? 2000
let subscribers = arguments.dropFirst().first.flatMap { $0 } ?? 10_000
let folder = NSTemporaryDirectory() + "herald-costs-\(UUID().uuidString)"

final class Outcome: @unchecked Sendable {
    // Written by the task before it signals, read by the main thread after the wait.
    var phases: [CostsWorkload.Phase] = []
    var error: (any Error)?
}
let outcome = Outcome()
let finished = DispatchSemaphore(value: 0)
// Detached: top-level code runs on the main actor, which the wait below blocks.
Task.detached {
    do {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        outcome.phases = try await CostsWorkload(registrations: registrations, subscribers: subscribers, folder: folder)
            .run()
    } catch {
        outcome.error = error
    }
    finished.signal()
}
finished.wait()
try? FileManager.default.removeItem(atPath: folder)
if let error = outcome.error {
    FileHandle.standardError.write(Data("herald-costs: \(error)\n".utf8))
    exit(1)
}
let counted = herald_running_on_valgrind() != 0
for phase in outcome.phases {
    let seconds = Double(phase.elapsed.components.seconds) + Double(phase.elapsed.components.attoseconds) / 1e18
    print(
        "phase \(phase.name) \(phase.operations) \(phase.units) "
            + String(format: "%.1f µs per %@", seconds * 1e6 / Double(phase.operations), phase.unit)
            + (counted ? " (under valgrind: the time means nothing, the instructions were dumped)" : ""))
}
if herald_callgrind_available() == 0 {
    print("built without valgrind's headers (Debian: valgrind): the phases cannot be counted")
}
