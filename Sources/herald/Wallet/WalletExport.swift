import ArgumentParser
import HeraldCLISupport
import HeraldCore

struct WalletExport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the stored encrypted v3 keystore JSON (no passphrase needed).",
        discussion:
            "The output imports into geth, MetaMask and eth-account. --show-private-key prints the raw key instead, after asking for the passphrase."
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Wallet name or address (default: --wallet, or the only wallet).")
    var name: String?

    @Flag(name: .long, help: "Decrypt and print the raw private key (hex). Anyone who sees it owns the wallet.")
    var showPrivateKey = false

    func run() async throws {
        let entry = try global.selectWallet(name)
        guard showPrivateKey else {
            print(entry.keystore.jsonText)
            return
        }
        let passphrase = try PassphraseSource(options: global).unlock()
        let key = try entry.keystore.decrypt(passphrase: passphrase)
        if global.json {
            try Terminal.printJSON([
                "address": entry.address.checksummed, "privateKey": Hex.encode(key.rawBytes, prefix: true),
            ])
        } else {
            print(Hex.encode(key.rawBytes, prefix: true))
        }
    }
}

struct WalletRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Delete a wallet's keystore file (asks for confirmation unless --yes).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Wallet name or address.")
    var name: String

    @Flag(name: .long, help: "Do not ask for confirmation.")
    var yes = false

    func run() async throws {
        let entry = try global.keystore.wallet(name)
        if !yes {
            let question =
                "Remove wallet \(entry.name) (\(entry.address.checksummed))? Its key is lost unless you have a copy. [y/N] "
            guard let answer = Terminal.ask(question, secret: false) else {
                throw CLIError(.usage, "not removing \(entry.name): no terminal to confirm on; pass --yes")
            }
            guard ["y", "yes"].contains(answer.lowercased()) else {
                print("kept \(entry.name)")
                return
            }
        }
        try global.keystore.remove(entry)
        if global.json {
            try Terminal.printJSON(WalletRow(name: entry.name, address: entry.address.checksummed, file: entry.path))
        } else {
            print("removed wallet \(entry.name) \(entry.address.checksummed)")
        }
    }
}
