import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

struct WalletImport: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a v3 keystore (geth, MetaMask, eth-account) or a raw private key file.",
        discussion: "A keystore is decrypted with its passphrase and re-encrypted with the same one."
    )

    @OptionGroup var global: GlobalOptions

    @Option(name: .long, help: ArgumentHelp("A Web3 Secret Storage v3 JSON file.", valueName: "FILE.json"))
    var keystore: String?

    @Option(
        name: .long,
        help: ArgumentHelp("A file holding the private key as 64 hex digits (0x optional).", valueName: "FILE"))
    var privateKeyFile: String?

    @Option(name: .long, help: "Wallet name (default: default, default-2, …).")
    var name: String?

    @Flag(name: .long, help: "Cheaper scrypt (n=4096, p=6) for the stored copy.")
    var light = false

    func validate() throws {
        guard (keystore == nil) != (privateKeyFile == nil) else {
            throw ValidationError("give exactly one of --keystore FILE.json or --private-key-file FILE")
        }
    }

    func run() async throws {
        let directory = global.keystore
        let source = PassphraseSource(options: global)
        let key: PrivateKey
        let passphrase: String
        var nameInFile: String?
        if let keystore {
            let parsed = try Keystore(json: Array(try Self.read(keystore)))
            nameInFile = parsed.name
            try Self.checkAddressFree(parsed.address, in: directory)
            if let name { try WalletStorage.checkName(name, in: directory) }
            passphrase = try source.unlock(prompt: "Passphrase of \(keystore): ")
            key = try parsed.decrypt(passphrase: passphrase)
        } else if let privateKeyFile {
            let text = String(decoding: try Self.read(privateKeyFile), as: UTF8.self)
            do {
                key = try PrivateKey(hex: text.trimmingCharacters(in: .whitespacesAndNewlines))
            } catch {
                throw CLIError(.badInput, "\(privateKeyFile): \(error.reason)")
            }
            if let name { try WalletStorage.checkName(name, in: directory) }
            passphrase = try source.choose()
        } else {
            throw CLIError(.usage, "give --keystore FILE.json or --private-key-file FILE")
        }
        // Before the (slow) re-encryption: one wallet per address.
        try Self.checkAddressFree(key.address, in: directory)
        let walletName = try name ?? Self.reusableName(nameInFile, in: directory) ?? directory.nextDefaultName()
        try WalletStorage.checkName(walletName, in: directory)
        let entry = try WalletStorage.store(key, name: walletName, passphrase: passphrase, light: light, in: directory)
        try WalletStorage.report(entry, json: global.json, verb: "imported")
    }

    /// A Herald export carries its wallet name: keep it when it is valid and free.
    static func reusableName(_ name: String?, in directory: KeystoreDirectory) throws -> String? {
        guard let name, KeystoreDirectory.isValidName(name) else { return nil }
        return try directory.wallets().contains { $0.name == name } ? nil : name
    }

    static func checkAddressFree(_ address: EthereumAddress?, in directory: KeystoreDirectory) throws {
        guard let address, let same = try directory.wallets().first(where: { $0.address == address }) else { return }
        throw CLIError(.usage, "wallet \(same.name) already holds \(address)")
    }

    static func read(_ path: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.usage, "cannot read \(path)")
        }
        guard data.count <= 1 << 20 else { throw CLIError(.badInput, "\(path) is larger than 1 MiB: not a key file") }
        return data
    }
}
