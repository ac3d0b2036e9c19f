import ArgumentParser
import Foundation
import HeraldCore

/// The options of CLI.md "Global", accepted before or after the command words.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Client state folder: keystore/, inbox.sqlite. Env HERALD_HOME.", valueName: "DIR"))
    var home: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read the keystore passphrase from this file (one trailing newline dropped). Env HERALD_PASSPHRASE holds the passphrase itself.",
            valueName: "FILE"))
    var passphraseFile: String?

    @Flag(name: .long, help: "Machine-readable output on stdout.")
    var json = false

    @Option(
        name: .long,
        help: ArgumentHelp("Which keystore wallet (name or address). Env HERALD_WALLET.", valueName: "NAME|ADDRESS"))
    var wallet: String?

    /// Options that take a value, and flags, for hoisting.
    static let valued: Set<String> = ["--home", "--passphrase-file", "--wallet"]
    static let flags: Set<String> = ["--json"]

    /// ArgumentParser only reads a subcommand's options after its name; move global options written
    /// before the command words (`herald --json wallet list`) to the end, where the leaf command sees them.
    static func hoist(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("--") {
            let name = String(first.split(separator: "=", maxSplits: 1)[0])
            if flags.contains(first) {
                leading.append(first)
                rest = rest.dropFirst()
            } else if valued.contains(name) {
                leading.append(first)
                rest = rest.dropFirst()
                if !first.contains("="), let value = rest.first {
                    leading.append(value)
                    rest = rest.dropFirst()
                }
            } else {
                break
            }
        }
        guard !leading.isEmpty else { return arguments }
        // Keep anything after a `--` terminator where it was.
        if let terminator = rest.firstIndex(of: "--") {
            return Array(rest[..<terminator]) + leading + Array(rest[terminator...])
        }
        return Array(rest) + leading
    }

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `--home`, else `HERALD_HOME`, else `~/.herald`.
    var homePath: String {
        if let home { return home }
        if let fromEnvironment = environment["HERALD_HOME"], !fromEnvironment.isEmpty { return fromEnvironment }
        return NSHomeDirectory() + "/.herald"
    }

    var keystore: KeystoreDirectory { KeystoreDirectory(path: homePath + "/keystore") }

    /// `--wallet`, else `HERALD_WALLET`.
    var walletSelector: String? {
        if let wallet { return wallet }
        if let fromEnvironment = environment["HERALD_WALLET"], !fromEnvironment.isEmpty { return fromEnvironment }
        return nil
    }

    /// The wallet named by `explicit`, `--wallet`/`HERALD_WALLET`, or the only one there is.
    func selectWallet(_ explicit: String? = nil) throws -> KeystoreDirectory.Entry {
        if let selector = explicit ?? walletSelector { return try keystore.wallet(selector) }
        let all = try keystore.wallets()
        switch all.count {
        case 0:
            throw CLIError(.usage, "no wallet in \(keystore.path): create one with `herald wallet create`")
        case 1:
            return all[0]
        default:
            throw CLIError(.usage, "\(all.count) wallets exist; name one with --wallet NAME (or HERALD_WALLET)")
        }
    }
}
