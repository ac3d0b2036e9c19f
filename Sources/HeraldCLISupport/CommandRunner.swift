package import ArgumentParser
import Foundation
import HeraldCore

/// The `main` of both executables, `herald` and `herald-dev`, so that they parse and fail alike.
package enum CommandRunner {
    /// Parses with global options hoisted, runs, and turns every failure into one stderr line and the
    /// exit code of CLI.md (0 done, 1 unexpected, 2 wrong passphrase, 3 refused, 4 unreachable,
    /// 64 usage, 65 bad input data).
    package static func run<Root: ParsableCommand>(_ root: Root.Type) async {
        let arguments = GlobalOptions.hoist(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try root.parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as CLIError {
            Terminal.printError(error.message)
            Foundation.exit(error.exitCode)
        } catch let error as HeraldError {
            let cliError = CLIError(error)
            Terminal.printError(cliError.message)
            Foundation.exit(cliError.exitCode)
        } catch {
            root.exit(withError: error)
        }
    }
}
