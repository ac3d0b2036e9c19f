import ArgumentParser
import HeraldCLISupport

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Wallet-bound push notifications: keystores, signed registration, encrypted messages.",
        version: HeraldVersion.current,
        subcommands: [
            ServeCommand.self, RegisterCommand.self, UnregisterCommand.self, ChannelCommand.self,
            InstallationCommand.self, SubscribeCommand.self,
            UnsubscribeCommand.self, SubscriptionsCommand.self, SettingsCommand.self, MuteCommand.self,
            UnmuteCommand.self, SendCommand.self, InboxCommand.self, WalletCommand.self,
            BisqCommand.self, WebPushCommand.self, WebhookCommand.self,
        ]
    )

    static func main() async { await CommandRunner.run(Self.self) }
}
