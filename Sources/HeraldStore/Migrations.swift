import GRDB

/// Schema migrations. A migration is never edited once shipped: changes are new migrations.
/// The SQL is mirrored in `Schemas/sql/` for operators; a test keeps the two identical.
enum Migrations {
    static let all: [(identifier: String, sql: String)] = [
        ("0001_initial", initialSQL),
        ("0002_channels", channelsSQL),
    ]

    static let channelsSQL = """
        -- Channels: sender wallets, managed by operators (`herald channel add`).
        CREATE TABLE channels (
          address    BLOB    NOT NULL PRIMARY KEY CHECK (length(address) = 20),
          name       TEXT    NOT NULL,
          icon       TEXT    NOT NULL DEFAULT '',
          url        TEXT    NOT NULL DEFAULT '',
          created_at INTEGER NOT NULL
        ) WITHOUT ROWID;

        -- Subscriptions: a subscriber follows a channel since a time.
        CREATE TABLE subscriptions (
          channel    BLOB    NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          subscriber BLOB    NOT NULL CHECK (length(subscriber) = 20),
          since      INTEGER NOT NULL,
          PRIMARY KEY (channel, subscriber)
        ) WITHOUT ROWID;
        CREATE INDEX subscriptions_by_subscriber ON subscriptions (subscriber);
        """

    static let initialSQL = """
        -- Device bindings: one row per (wallet, platform, token), clustered by wallet (20-byte blob).
        CREATE TABLE bindings (
          wallet       BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android')),
          device_token TEXT    NOT NULL,
          created_at   INTEGER NOT NULL,
          last_seen    INTEGER NOT NULL,
          PRIMARY KEY (wallet, platform, device_token)
        ) WITHOUT ROWID;

        -- Spent nonces, an append-only log: digest = keccak256(signer || nonce as 32 bytes)[0..16).
        -- The server keeps the unexpired digests in memory for the replay check and reloads them
        -- from here at start; rows are deleted once retained_until (expiresAt + skew) has passed.
        CREATE TABLE nonces (
          digest         BLOB    NOT NULL CHECK (length(digest) = 16),
          retained_until INTEGER NOT NULL
        );
        CREATE INDEX nonces_by_retention ON nonces (retained_until);

        -- The public key recovered from each wallet's verified signatures (65 bytes, 04 || X || Y).
        CREATE TABLE wallet_keys (
          wallet     BLOB    NOT NULL PRIMARY KEY CHECK (length(wallet) = 20),
          public_key BLOB    NOT NULL CHECK (length(public_key) = 65),
          updated_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for (identifier, sql) in all {
            migrator.registerMigration(identifier) { db in try db.execute(sql: sql) }
        }
        return migrator
    }
}
