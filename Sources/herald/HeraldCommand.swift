import ArgumentParser
import Foundation
import HeraldCore

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Wallet-bound push notifications: keystores, signed registration, encrypted messages.",
        version: HeraldVersion.current,
        subcommands: [
            ServeCommand.self, RegisterCommand.self, UnregisterCommand.self, ChannelCommand.self,
            InstallationCommand.self, SubscribeCommand.self,
            UnsubscribeCommand.self, SubscriptionsCommand.self, SendCommand.self, InboxCommand.self, WalletCommand.self,
            BenchCommand.self, FakeAPNsCommand.self, FakeFCMCommand.self, BisqCommand.self,
            WebPushCommand.self, FakeWebPushCommand.self,
        ]
    )

    /// Parses with global options hoisted, runs, and turns every failure into one stderr line and the
    /// exit code of CLI.md (0 done, 1 unexpected, 2 wrong passphrase, 3 refused, 4 unreachable,
    /// 64 usage, 65 bad input data).
    static func main() async {
        let arguments = GlobalOptions.hoist(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try parseAsRoot(arguments)
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
            exit(withError: error)
        }
    }
}

enum HeraldVersion {
    static let current = "0.1.0"
}
