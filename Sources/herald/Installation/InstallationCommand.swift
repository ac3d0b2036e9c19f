import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldServer
import HeraldStore

/// The upstream relay's operator manages installations (self-hosted servers that push through it,
/// docs/protocol.md §7) on its database directly, as with channels; running nodes see a removal within 60 s.
struct InstallationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "installation",
        abstract: "Add, list and remove the installations allowed to push through this upstream relay.",
        subcommands: [InstallationAdd.self, InstallationList.self, InstallationRemove.self]
    )
}

/// One installation as printed with `--json` (never its key or the key's hash).
struct InstallationRow: Encodable {
    let id: String
    let name: String
    let rate: Int
    let createdAt: Int64

    init(_ installation: RelayInstallation) {
        id = installation.id
        name = installation.name
        rate = installation.rate
        createdAt = installation.createdAt
    }
}

struct InstallationAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an installation; prints its id and key once (only the key's SHA-256 is stored).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    @Option(name: .long, help: "A name for the operator's own records (1-80 characters).") var name: String
    @Option(name: .long, help: "Pushes per second allowed (token bucket, burst 10×).") var rate: Int = 100

    /// What `--json` prints: the one time the key is shown.
    struct Created: Encodable {
        let id: String
        let key: String
        let name: String
        let rate: Int
    }

    func run() async throws {
        guard !name.isEmpty, name.unicodeScalars.count <= 80 else {
            throw CLIError(.usage, "--name must be 1-80 characters")
        }
        guard (1...1_000_000).contains(rate) else { throw CLIError(.usage, "--rate must be 1-1000000 pushes/s") }
        let (id, key) = RelayCredentials.generate()
        let store = try await storage.open()
        let installation = RelayInstallation(
            id: id, name: name, keyHash: RelayCredentials.hash(key: key), rate: rate,
            createdAt: Int64(Date().timeIntervalSince1970))
        do {
            try await store.addInstallation(installation)
        } catch {
            try? await store.close()
            throw CLIError(.unexpected, "cannot add the installation: \(error)")
        }
        try await store.close()
        if global.json {
            try Terminal.printJSON(Created(id: id, key: key, name: name, rate: rate))
        } else {
            print("installation \(id) \(name), \(rate) pushes/s")
            print("key: \(key)")
            print("The key is shown only now: give it to the installation's operator (a file for")
            print("--upstream-installation-key-file); this server keeps only its SHA-256.")
        }
    }
}

struct InstallationList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List the installations.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    func run() async throws {
        let store = try await storage.open()
        let installations = try await store.installations()
        try await store.close()
        if global.json {
            try Terminal.printJSON(installations.map(InstallationRow.init))
        } else if installations.isEmpty {
            print("no installations; add one with `herald installation add --name NAME`")
        } else {
            for installation in installations {
                print("\(installation.id)  \(installation.name)  \(installation.rate) pushes/s")
            }
        }
    }
}

struct InstallationRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove an installation: its tokens stop working within 60 s.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var storage: DatabaseOption

    @Argument(help: "The installation's id.") var id: String

    func run() async throws {
        let id = id.lowercased()
        guard RelayCredentials.isInstallationID(id) else {
            throw CLIError(.usage, "\(self.id) is not an installation id")
        }
        let store = try await storage.open()
        let removed = try await store.removeInstallation(id: id)
        try await store.close()
        guard removed else { throw CLIError(.usage, "no installation \(id)") }
        print("removed installation \(id)")
    }
}
