import ArgumentParser
import Foundation
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
        let walletName = try name ?? directory.nextDefaultName()
        try WalletStorage.checkName(walletName, in: directory)
        let source = PassphraseSource(options: global)
        let key: PrivateKey
        let passphrase: String
        if let keystore {
            let parsed = try Keystore(json: Array(try Self.read(keystore)))
            passphrase = try source.unlock(prompt: "Passphrase of \(keystore): ")
            key = try parsed.decrypt(passphrase: passphrase)
        } else if let privateKeyFile {
            let text = String(decoding: try Self.read(privateKeyFile), as: UTF8.self)
            do {
                key = try PrivateKey(hex: text.trimmingCharacters(in: .whitespacesAndNewlines))
            } catch {
                throw CLIError(.badInput, "\(privateKeyFile) does not hold a secp256k1 private key (64 hex digits)")
            }
            passphrase = try source.choose()
        } else {
            throw CLIError(.usage, "give --keystore FILE.json or --private-key-file FILE")
        }
        let entry = try WalletStorage.store(key, name: walletName, passphrase: passphrase, light: light, in: directory)
        try WalletStorage.report(entry, json: global.json, verb: "imported")
    }

    static func read(_ path: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError(.usage, "cannot read \(path)")
        }
        guard data.count <= 1 << 20 else { throw CLIError(.badInput, "\(path) is larger than 1 MiB: not a key file") }
        return data
    }
}
