import GRDB
public import HeraldCore

/// Bisq messages (docs/protocol.md §8) in the §6 table: type-3 rows of the pairing's pseudo-wallet `bisq:…`.
/// They have no server, so no `sid`: a message already cached is recognised by the digest of its JSON.
extension InboxStore {
    public static let bisqApp = "Bisq"

    /// Caches a user-facing message as a type-3 row of `walletKey` (`app` Bisq, `asub` the title, `amsg`
    /// the message, `acta` the action required, `epoch` the sent date); false when it was already cached.
    @discardableResult
    public func insertBisq(_ message: BisqMessage, walletKey: String) throws -> Bool {
        let digest = message.digest
        return try queue.write { db in
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO feed
                      (sid, type, app, icon, url, secret, asub, amsg, acta, aimg, epoch, wallet, bisq_digest)
                    VALUES (NULL, 3, ?, '', '', '', ?, ?, ?, '', ?, ?, ?)
                    """,
                arguments: [
                    Self.bisqApp, message.title, message.message, message.actionRequired, message.sentDate, walletKey,
                    digest,
                ])
            return db.changesCount > 0
        }
    }

    /// Deletes every row of `walletKey` (Bisq's ERASE) and no other; returns how many went.
    @discardableResult
    public func deleteAll(walletKey: String) throws -> Int {
        try queue.write { db in
            try db.execute(sql: "DELETE FROM feed WHERE wallet = ?", arguments: [walletKey])
            return db.changesCount
        }
    }
}
