import ArgumentParser

struct WalletCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "wallet",
        abstract: "Create, import, list, export and remove encrypted keystore wallets.",
        subcommands: [
            WalletCreate.self, WalletImport.self, WalletList.self, WalletAddress.self, WalletExport.self,
            WalletRemove.self,
        ]
    )
}

/// One wallet as `--json` prints it.
struct WalletRow: Encodable {
    let name: String
    let address: String
    let file: String
}
