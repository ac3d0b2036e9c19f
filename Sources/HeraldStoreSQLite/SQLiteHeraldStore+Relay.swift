import Foundation
import GRDB
import HeraldCore
public import HeraldStore

extension SQLiteHeraldStore {
    public func addInstallation(_ installation: RelayInstallation) async throws {
        try await write { db in
            let exists =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM relay_installations WHERE id = ?", arguments: [installation.id])
                ?? 0
            guard exists == 0 else { throw StoreError("an installation \(installation.id) exists already") }
            try db.execute(
                sql: "INSERT INTO relay_installations (id, name, key_hash, rate, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [
                    installation.id, installation.name, Data(installation.keyHash), installation.rate,
                    installation.createdAt,
                ])
        }
    }

    public func removeInstallation(id: String) async throws -> Bool {
        try await write { db in
            try db.execute(sql: "DELETE FROM relay_usage WHERE installation = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM relay_installations WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func installations() async throws -> [RelayInstallation] {
        try await read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, name, key_hash, rate, created_at FROM relay_installations ORDER BY created_at, id"
            ).map(Self.installation(from:))
        }
    }

    public func installation(id: String) async throws -> RelayInstallation? {
        try await read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, name, key_hash, rate, created_at FROM relay_installations WHERE id = ?",
                arguments: [id]
            ).map(Self.installation(from:))
        }
    }

    private static func installation(from row: Row) -> RelayInstallation {
        let hash: Data = row["key_hash"]
        return RelayInstallation(
            id: row["id"], name: row["name"], keyHash: Array(hash), rate: row["rate"], createdAt: row["created_at"])
    }

    public func relayTokenSecret(candidate: [UInt8]) async throws -> [UInt8] {
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO relay_secrets (name, secret) VALUES ('access-token', ?)
                    ON CONFLICT (name) DO NOTHING
                    """,
                arguments: [Data(candidate)])
            let stored = try Data.fetchOne(db, sql: "SELECT secret FROM relay_secrets WHERE name = 'access-token'")
            guard let secret = stored else { throw StoreError("the relay's token secret could not be stored") }
            return Array(secret)
        }
    }

    public func countRelayOutcomes(installation: String, _ usage: RelayUsage) async throws {
        guard !usage.isEmpty else { return }
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO relay_usage (installation, sent, dead, retry, failed)
                    SELECT id, ?, ?, ?, ? FROM relay_installations WHERE id = ?
                    ON CONFLICT (installation) DO UPDATE SET
                      sent = sent + excluded.sent, dead = dead + excluded.dead,
                      retry = retry + excluded.retry, failed = failed + excluded.failed
                    """,
                arguments: [usage.sent, usage.dead, usage.retry, usage.failed, installation])
        }
    }

    public func relayUsage(installation: String) async throws -> RelayUsage {
        try await read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT sent, dead, retry, failed FROM relay_usage WHERE installation = ?",
                    arguments: [installation])
            else { return RelayUsage() }
            return RelayUsage(sent: row["sent"], dead: row["dead"], retry: row["retry"], failed: row["failed"])
        }
    }
}
