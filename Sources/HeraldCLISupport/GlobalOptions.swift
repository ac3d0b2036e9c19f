package import ArgumentParser
import Foundation
package import HeraldCore

/// The options of CLI.md "Global", accepted before or after the command words.
package struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Client state folder: keystore/, inbox.sqlite. Env HERALD_HOME.", valueName: "DIR"))
    package var home: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read the keystore passphrase from this file (one trailing newline dropped). Env HERALD_PASSPHRASE holds the passphrase itself.",
            valueName: "FILE"))
    package var passphraseFile: String?

    @Flag(name: .long, help: "Machine-readable output on stdout.")
    package var json = false

    @Option(
        name: .long,
        help: ArgumentHelp("Which keystore wallet (name or address). Env HERALD_WALLET.", valueName: "NAME|ADDRESS"))
    package var wallet: String?

    /// ParsableArguments' requirement, spelled out: the memberwise one would be internal to this module.
    package init() {}

    /// Options that take a value, and flags, for hoisting.
    package static let valued: Set<String> = ["--home", "--passphrase-file", "--wallet"]
    package static let flags: Set<String> = ["--json"]

    /// ArgumentParser only reads a subcommand's options after the leaf command's name; move global
    /// options written before or between the command words (`herald --json wallet list`,
    /// `herald wallet --home X list`) to the end, where the leaf command's option group reads them.
    /// Scanning stops at the first other option: from there on ArgumentParser parses as usual.
    package static func hoist(_ arguments: [String]) -> [String] {
        var kept: [String] = []
        var moved: [String] = []
        var index = 0
        while index < arguments.count {
            let token = arguments[index]
            let name = String(token.split(separator: "=", maxSplits: 1).first ?? "")
            if flags.contains(token) {
                moved.append(token)
            } else if valued.contains(name) {
                moved.append(token)
                if !token.contains("="), index + 1 < arguments.count {
                    index += 1
                    moved.append(arguments[index])
                }
            } else if token.hasPrefix("-") {
                break
            } else {
                kept.append(token)
            }
            index += 1
        }
        return kept + Array(arguments[index...]) + moved
    }

    package var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// `--home`, else `HERALD_HOME`, else `~/.herald`.
    package var homePath: String {
        if let home { return home }
        if let fromEnvironment = environment["HERALD_HOME"], !fromEnvironment.isEmpty { return fromEnvironment }
        return NSHomeDirectory() + "/.herald"
    }

    package var keystore: KeystoreDirectory { KeystoreDirectory(path: homePath + "/keystore") }

    /// `--wallet`, else `HERALD_WALLET`.
    package var walletSelector: String? {
        if let wallet { return wallet }
        if let fromEnvironment = environment["HERALD_WALLET"], !fromEnvironment.isEmpty { return fromEnvironment }
        return nil
    }

    /// The wallet named by `explicit`, `--wallet`/`HERALD_WALLET`, or the only one there is. A warning
    /// is printed when that wallet's file can be read by others.
    package func selectWallet(_ explicit: String? = nil) throws -> KeystoreDirectory.Entry {
        let scan = try keystore.scan()
        let chosen = try pick(explicit, from: scan)
        for warning in scan.warnings where warning.hasPrefix(chosen.path + " ") { Terminal.printWarning(warning) }
        return chosen
    }

    private func pick(_ explicit: String?, from scan: KeystoreDirectory.Scan) throws -> KeystoreDirectory.Entry {
        if let selector = explicit ?? walletSelector { return try keystore.wallet(selector, among: scan.wallets) }
        let all = scan.wallets
        switch all.count {
        case 0:
            throw CLIError(.usage, "no wallet in \(keystore.path): create one with `herald wallet create`")
        case 1:
            return all[0]
        default:
            throw CLIError(
                .usage,
                "\(all.count) wallets exist; name one (as an argument where the command takes one, or --wallet NAME, or HERALD_WALLET)"
            )
        }
    }
}
