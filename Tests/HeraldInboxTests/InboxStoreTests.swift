import Foundation
import HeraldCore
import Testing

@testable import HeraldInbox

@Suite struct InboxStoreTests {
    static let wallet = try! EthereumAddress(parsing: "0x3f243FdacE01Cfd9719f7359c94BA11361f32471")

    static func store() throws -> (InboxStore, String) {
        let folder = NSTemporaryDirectory() + "herald-inbox-\(UUID().uuidString)"
        return (try InboxStore(path: folder + "/inbox.sqlite"), folder)
    }

    static func item(sid: Int64, type: Int = 3, epoch: Int64, message: String = "m") -> FeedItem {
        FeedItem(
            sid: sid, type: type, app: "Trades", icon: "i", url: "u", secret: "", subject: "", message: message,
            callToAction: "", image: "", epoch: epoch)
    }

    @Test func theFeedTableIsExactlyTheProtocolSchema() throws {
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let columns = try store.feedColumns()
        let expected: [(String, String, Bool)] = [
            ("nid", "INTEGER", true), ("sid", "INTEGER", false), ("type", "INTEGER", true), ("app", "TEXT", true),
            ("icon", "TEXT", true), ("url", "TEXT", true), ("appbot", "INTEGER", true), ("secret", "TEXT", false),
            ("asub", "TEXT", false), ("amsg", "TEXT", true), ("acta", "TEXT", false), ("aimg", "TEXT", false),
            ("hidden", "INTEGER", true), ("epoch", "INTEGER", true), ("wallet", "TEXT", true),
            // The first extra column §6 names: read here or on the server (§10).
            ("read", "INTEGER", true),
            // Extra columns follow the §6 ones (allowed): the sender, known for synced items.
            ("channel", "TEXT", false),
            // … and the digest that caches a Bisq message once (docs/protocol.md §8).
            ("bisq_digest", "TEXT", false),
        ]
        #expect(columns.count == expected.count)
        for (column, want) in zip(columns, expected) {
            #expect(column.name == want.0 && column.type == want.1 && column.notNull == want.2, "\(column.name)")
        }
    }

    @Test func insertsAreIdempotentAndListsNewestFirst() throws {
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(
            try store.insert(
                [Self.item(sid: 1, epoch: 100), Self.item(sid: 2, epoch: 300), Self.item(sid: 3, epoch: 200)],
                wallet: Self.wallet) == 3)
        #expect(try store.insert([Self.item(sid: 2, epoch: 300, message: "changed")], wallet: Self.wallet) == 0)
        let rows = try store.list(wallet: Self.wallet, limit: 10)
        #expect(rows.map(\.item.sid) == [2, 3, 1])
        #expect(rows.first?.item.message == "m")
        #expect(try store.setHidden(true, nids: [rows[0].nid], wallet: Self.wallet) == 1)
        #expect(try store.list(wallet: Self.wallet, limit: 10).map(\.item.sid) == [3, 1])
        #expect(try store.list(wallet: Self.wallet, visibility: .hidden, limit: 10).map(\.item.sid) == [2])
        #expect(try store.count(wallet: Self.wallet, visibility: .all) == 3)
        #expect(try store.list(wallet: Self.wallet, limit: 1, offset: 1).map(\.item.sid) == [1])
        let other = try EthereumAddress(parsing: "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23")
        #expect(try store.list(wallet: other, limit: 10).isEmpty)
    }

    @Test func pushesParseInEveryDeliveryShape() throws {
        let data =
            #"{"type":"3","sid":"7","epoch":"1763769600123","app":"Trades","icon":"","url":"","secret":"","asub":"","amsg":"hello","acta":"","aimg":""}"#
        let shapes = [
            #"{"notification":{"title":"t","body":"b"},"data":\#(data)}"#,
            #"{"aps":{"alert":{"title":"t","body":"b"},"mutable-content":1},"type":"3","sid":"7","epoch":"1763769600123","app":"Trades","amsg":"hello"}"#,
            #"{"message":{"token":"x","notification":{"title":"t","body":"b"},"data":\#(data)}}"#,
        ]
        for shape in shapes {
            let item = try FeedItem.parse(push: JSONParser.parse(shape))
            #expect(
                item.sid == 7 && item.type == 3 && item.message == "hello" && item.epoch == 1_763_769_600_123,
                "\(shape)")
        }
        for bad in [
            #"{"x":1}"#, #"{"data":{"type":"9","sid":"1","epoch":"1"}}"#,
            #"{"data":{"type":"3","sid":"x","epoch":"1"}}"#,
            #"{"data":{"type":"2","sid":"1","epoch":"1"}}"#, #"{"data":{"type":"setup","sid":"","epoch":"1"}}"#,
            #"{"data":{"type":"3","sid":"1","epoch":"1","amsg":5}}"#,
        ] {
            #expect(throws: InboxError.self) { try FeedItem.parse(push: JSONParser.parse(bad)) }
        }
    }

    @Test func typeTwoDecryptsInMemoryOnly() throws {
        let key = PrivateKey.generate()
        let secret = "k3Y9s0mEs3cr3tZ"
        var item = Self.item(
            sid: 9, type: 2, epoch: 1, message: try CryptoJSAES.encrypt("trade accepted", passphrase: secret))
        item.secret = try ECIES.encrypt(text: secret, to: key.publicKey)
        item.subject = try CryptoJSAES.encrypt("Offer", passphrase: secret)
        let plain = try item.decrypted(with: key)
        #expect(plain.message == "trade accepted" && plain.subject == "Offer" && plain.image == "")
        #expect(throws: HeraldError.self) { try item.decrypted(with: PrivateKey.generate()) }

        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try store.insert([item], wallet: key.address)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: folder + "/inbox.sqlite"))
        #expect(bytes.range(of: Data("trade accepted".utf8)) == nil)
        #expect(try store.list(wallet: key.address, limit: 1).first?.item.message == item.message)
    }
}
