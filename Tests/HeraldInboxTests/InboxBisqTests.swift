import Foundation
import HeraldCore
import HeraldInbox
import Testing

@Suite struct InboxBisqTests {
    static let pseudoWallet = BisqKey.pseudoWallet(forKey: "0123456789abcdef0123456789ABCDEF")
    static let otherPseudoWallet = BisqKey.pseudoWallet(forKey: "fedcba9876543210fedcba9876543210")

    static func store() throws -> (InboxStore, String) {
        let folder = NSTemporaryDirectory() + "herald-inbox-bisq-" + UUID().uuidString
        return (try InboxStore(path: folder + "/inbox.sqlite"), folder)
    }

    @Test func aBisqMessageIsATypeThreeRowOfItsPseudoWalletCachedOnce() throws {
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let trade = BisqMessage(
            sentDate: 1_763_769_600_123, txId: "8b1c", title: "Trade accepted", message: "Start the payment.",
            type: .trade)
        #expect(try store.insertBisq(trade, walletKey: Self.pseudoWallet))
        #expect(try !store.insertBisq(trade, walletKey: Self.pseudoWallet))
        var other = trade
        other.txId = "9c2d"
        #expect(try store.insertBisq(other, walletKey: Self.pseudoWallet))

        let rows = try store.list(walletKey: Self.pseudoWallet, limit: nil)
        #expect(rows.count == 2)
        let row = try #require(rows.first)
        #expect(row.item.type == 3 && row.item.app == "Bisq")
        #expect(row.item.subject == "Trade accepted" && row.item.message == "Start the payment.")
        #expect(row.item.epoch == 1_763_769_600_123)
        #expect(row.wallet == Self.pseudoWallet)
    }

    @Test func eraseDeletesEveryRowOfThatPseudoWalletAndNoOther() throws {
        let (store, folder) = try Self.store()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (index, wallet) in [Self.pseudoWallet, Self.pseudoWallet, Self.otherPseudoWallet].enumerated() {
            try store.insertBisq(
                BisqMessage(sentDate: Int64(index), title: "t\(index)", type: .price), walletKey: wallet)
        }
        #expect(try store.deleteAll(walletKey: Self.pseudoWallet) == 2)
        #expect(try store.count(walletKey: Self.pseudoWallet) == 0)
        #expect(try store.count(walletKey: Self.otherPseudoWallet) == 1)
    }
}
