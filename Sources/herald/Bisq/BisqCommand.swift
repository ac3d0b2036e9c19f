import ArgumentParser
import Foundation
import HeraldCLISupport
import HeraldCore

/// `herald bisq …`: the Bisq desktop's part of docs/protocol.md §8, for tests and for people who script Bisq.
struct BisqCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisq",
        abstract: "Pair Bisq phones and send them Bisq's encrypted notifications through a Herald relay.",
        subcommands: [BisqPair.self, BisqPhones.self, BisqRemove.self, BisqSend.self])

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }
}

struct BisqPair: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair", abstract: "Pair a phone from the token its Bisq app shows; sends SETUP_CONFIRMATION.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The pairing token (iOS|…, iOSDev|… or android|…).") var token: String
    @Option(name: .long, help: "The Herald server with --bisq-relay on.") var server: String
    @Option(name: .long, help: "A name for the phone (default: its descriptor); the same name replaces.")
    var name: String?

    func run() async throws {
        let pairing: BisqPairingToken
        do { pairing = try BisqPairingToken(parsing: token) } catch { throw CLIError(.badInput, error.reason) }
        let relay = try BisqRelayClient(server: server)
        let phone = BisqPhoneBook.Phone(
            name: name ?? pairing.descriptor, descriptor: pairing.descriptor, platform: pairing.platform,
            key: pairing.key, deviceToken: pairing.deviceToken,
            server: relay.server.absoluteString.trimmingTrailingSlashes)
        guard !phone.name.isEmpty, !phone.name.contains("\n") else { throw CLIError(.usage, "--name must be one line") }
        // Confirmation first: a phone that never got it is not stored.
        try await relay.send(
            BisqMessage(sentDate: BisqCommand.now(), type: .setupConfirmation), to: phone, sound: false)
        let book = BisqPhoneBook(home: global.homePath)
        try book.save(try book.load().filter { $0.name != phone.name } + [phone])
        if global.json {
            print(BisqPhoneJSON.make(phone).jsonText)
        } else {
            print("paired \(phone.name) (\(phone.platform.rawValue)) through \(phone.server); setup confirmation sent")
        }
    }
}

struct BisqPhones: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phones", abstract: "The paired phones (never their keys).")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let phones = try BisqPhoneBook(home: global.homePath).load()
        if global.json {
            print(JSONValue.array(phones.map(BisqPhoneJSON.make)).jsonText)
            return
        }
        if phones.isEmpty { print("no phones paired") }
        for phone in phones {
            print(
                "\(phone.name)  \(phone.platform.rawValue)  \(DeviceToken.logPrefix(phone.deviceToken))  \(phone.server)"
            )
        }
    }
}

struct BisqRemove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Forget a phone; sends ERASE first and keeps the phone if that fails.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The phone's name.") var name: String
    @Flag(name: .long, help: "Forget it without sending ERASE.") var noErase = false

    func run() async throws {
        let book = BisqPhoneBook(home: global.homePath)
        let phones = try book.load()
        guard let phone = phones.first(where: { $0.name == name }) else {
            throw CLIError(.usage, "no phone named \(name) (see herald bisq phones)")
        }
        if !noErase {
            try await BisqRelayClient(server: phone.server).send(
                BisqMessage(sentDate: BisqCommand.now(), type: .erase), to: phone, sound: false)
        }
        try book.save(phones.filter { $0.name != name })
        print(noErase ? "removed \(name)" : "sent ERASE to \(name) and removed it")
    }
}

struct BisqSend: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Send a Bisq notification to the paired phones (or one of them).")

    @OptionGroup var global: GlobalOptions
    @Option(name: .long, help: "Use this server's relay instead of the one each phone was paired through.")
    var server: String?
    @Option(name: .long, help: "TRADE, DISPUTE, OFFER, PRICE, MARKET or FINANCIAL.") var type: String
    @Option(name: .long, help: "The title.") var title: String
    @Option(name: .long, help: "The message.") var message: String
    @Option(name: .long, help: "The trade or transaction id.") var tx: String = ""
    @Option(name: .long, help: "What the user must do, if anything.") var actionRequired: String = ""
    @Flag(name: .long, help: "Ask for a sound (snd).") var sound = false
    @Option(name: .long, help: "Only this phone.") var phone: String?

    func run() async throws {
        guard let kind = BisqMessage.Kind(rawValue: type), kind.isUserFacing else {
            throw CLIError(.usage, "--type must be TRADE, DISPUTE, OFFER, PRICE, MARKET or FINANCIAL")
        }
        var phones = try BisqPhoneBook(home: global.homePath).load()
        if let phone {
            phones = phones.filter { $0.name == phone }
            guard !phones.isEmpty else { throw CLIError(.usage, "no phone named \(phone) (see herald bisq phones)") }
        }
        guard !phones.isEmpty else { throw CLIError(.usage, "no phones paired: run herald bisq pair first") }
        let bisqMessage = BisqMessage(
            sentDate: BisqCommand.now(), txId: tx, title: title, message: message, type: kind,
            actionRequired: actionRequired)
        for target in phones {
            try await BisqRelayClient(server: server ?? target.server).send(bisqMessage, to: target, sound: sound)
            if !global.json { print("sent \(kind.rawValue) to \(target.name)") }
        }
        if global.json {
            print(
                JSONValue.object([
                    ("sent", .array(phones.map { .string($0.name) })), ("message", bisqMessage.jsonValue),
                ]).jsonText)
        }
    }
}

/// A phone as `--json` prints it: never its key.
enum BisqPhoneJSON {
    static func make(_ phone: BisqPhoneBook.Phone) -> JSONValue {
        .object([
            ("name", .string(phone.name)), ("descriptor", .string(phone.descriptor)),
            ("platform", .string(phone.platform.rawValue)), ("deviceToken", .string(phone.deviceToken)),
            ("server", .string(phone.server)),
        ])
    }
}
