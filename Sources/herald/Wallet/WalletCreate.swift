import ArgumentParser
import HeraldCLISupport
import HeraldCore

struct WalletCreate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Generate a new key and store it in an encrypted keystore (scrypt n=2^18, or n=2^12 with --light)."
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: "Wallet name (default: default, default-2, …).")
    var name: String?

    @Flag(name: .long, help: "Cheaper scrypt (n=4096, p=6), as geth --lightkdf: for tests and slow devices.")
    var light = false

    func run() async throws {
        let directory = global.keystore
        let walletName = try name ?? directory.nextDefaultName()
        try WalletStorage.checkName(walletName, in: directory)
        let passphrase = try PassphraseSource(options: global).choose()
        let key = PrivateKey.generate()
        let entry = try WalletStorage.store(key, name: walletName, passphrase: passphrase, light: light, in: directory)
        try WalletStorage.report(entry, json: global.json, verb: "created")
    }
}

/// What create and import share: name checks, encryption, storing and the report.
enum WalletStorage {
    /// Fails before any expensive work when the name is invalid or taken.
    static func checkName(_ name: String, in directory: KeystoreDirectory) throws {
        guard KeystoreDirectory.isValidName(name) else {
            throw CLIError(
                .usage, "invalid wallet name \(name): use 1-64 letters, digits, '.', '_' or '-', starting with a letter"
            )
        }
        if try directory.wallets().contains(where: { $0.name == name }) {
            throw CLIError(.usage, "a wallet named \(name) already exists")
        }
    }

    static func store(
        _ key: PrivateKey, name: String, passphrase: String, light: Bool, in directory: KeystoreDirectory
    ) throws
        -> KeystoreDirectory.Entry
    {
        let keystore = try Keystore(
            encrypting: key, passphrase: passphrase, kdf: light ? .lightScrypt() : .standardScrypt(), name: name)
        return try directory.add(keystore)
    }

    static func report(_ entry: KeystoreDirectory.Entry, json: Bool, verb: String) throws {
        if json {
            try Terminal.printJSON(WalletRow(name: entry.name, address: entry.address.checksummed, file: entry.path))
        } else {
            print("\(verb) wallet \(entry.name) \(entry.address.checksummed)")
            print("keystore: \(entry.path)")
        }
    }
}
