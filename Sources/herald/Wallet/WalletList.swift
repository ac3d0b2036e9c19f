import ArgumentParser
import HeraldCLISupport
import HeraldCore

struct WalletList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the stored wallets.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let scan = try global.keystore.scan()
        let wallets = scan.wallets
        for (path, reason) in scan.skipped { Terminal.printWarning("skipped \(path): \(reason)") }
        for warning in scan.warnings { Terminal.printWarning(warning) }
        if global.json {
            try Terminal.printJSON(
                wallets.map { WalletRow(name: $0.name, address: $0.address.checksummed, file: $0.path) })
            return
        }
        guard !wallets.isEmpty else {
            print("no wallets in \(global.keystore.path); create one with `herald wallet create`")
            return
        }
        let width = max(4, wallets.map(\.name.count).max() ?? 0)
        print("NAME".padding(toLength: width, withPad: " ", startingAt: 0) + "  ADDRESS")
        for wallet in wallets {
            print(wallet.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + wallet.address.checksummed)
        }
    }
}

struct WalletAddress: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "address", abstract: "Print a wallet's EIP-55 address alone.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "Wallet name or address (default: --wallet, or the only wallet).")
    var name: String?

    func run() async throws {
        let entry = try global.selectWallet(name)
        if global.json {
            try Terminal.printJSON(WalletRow(name: entry.name, address: entry.address.checksummed, file: entry.path))
        } else {
            print(entry.address.checksummed)
        }
    }
}
