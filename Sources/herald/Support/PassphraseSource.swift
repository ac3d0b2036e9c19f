import Foundation
import HeraldCLISupport

/// Where the keystore passphrase comes from (CLI.md): `--passphrase-file`, else `HERALD_PASSPHRASE`,
/// else an interactive prompt without echo. Never a plain argument, never logged.
struct PassphraseSource {
    let options: GlobalOptions

    /// The passphrase for unlocking an existing keystore.
    func unlock(prompt: String = "Passphrase: ") throws -> String {
        if let given = try given() { return given }
        guard let typed = Terminal.ask(prompt, secret: true) else { throw noSource }
        return typed
    }

    /// A new passphrase: asked twice when typed, so that a typo cannot lock the key away.
    func choose() throws -> String {
        let passphrase: String
        if let given = try given() {
            passphrase = given
        } else {
            guard let first = Terminal.ask("New passphrase: ", secret: true) else { throw noSource }
            guard let second = Terminal.ask("Repeat passphrase: ", secret: true) else { throw noSource }
            guard first == second else { throw CLIError(.usage, "the passphrases do not match; nothing was written") }
            passphrase = first
        }
        if passphrase.isEmpty { Terminal.printWarning("the passphrase is empty: anyone with the file has the key") }
        return passphrase
    }

    private func given() throws -> String? {
        if let file = options.passphraseFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw CLIError(.usage, "cannot read passphrase file \(file)")
            }
            var bytes = Array(data)
            // The file's bytes less one trailing "\n" or "\r\n" (CLI.md), not normalised.
            if bytes.last == UInt8(ascii: "\n") {
                bytes.removeLast()
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CLIError(.badInput, "passphrase file \(file) is not UTF-8")
            }
            return text
        }
        return options.environment["HERALD_PASSPHRASE"]
    }

    private var noSource: CLIError {
        CLIError(.usage, "no passphrase: no terminal to ask on; use --passphrase-file FILE or HERALD_PASSPHRASE")
    }
}
