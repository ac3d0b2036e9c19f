import GRDB
import HeraldStore

/// Schema migrations. A migration is never edited once shipped: changes are new migrations.
/// The SQL is mirrored in `Schemas/sql/` for operators; a test keeps the two identical.
enum Migrations {
    static let all: [(identifier: String, sql: String)] = [
        ("0001_initial", initialSQL),
        ("0002_channels", channelsSQL),
        ("0003_notifications", notificationsSQL),
        ("0004_dead_tokens", deadTokensSQL),
        ("0005_nodes", nodesSQL),
        ("0006_relay", relaySQL),
        ("0007_bisq", bisqSQL),
        ("0008_webpush", webPushSQL),
        ("0009_checks_without_lists", checksWithoutListsSQL),
        ("0010_retention", retentionSQL),
        ("0011_subscriber_control", subscriberControlSQL),
        ("0012_unread_counters", unreadCountersSQL),
        ("0013_delegates", delegatesSQL),
        ("0014_push_options", pushOptionsSQL),
        ("0015_idempotent_answers", idempotentAnswersSQL),
        ("0016_webhooks", webhooksSQL),
        ("0017_outbox_by_platform", outboxByPlatformSQL),
    ]

    static let outboxByPlatformSQL = """
        -- Each push lane claims the pushes of its own platforms (APNs', FCM's, Web Push's), so the due index
        -- leads with the platform: on (next_attempt_at, id) alone, a lane with nothing of its own to send read
        -- every queued push of the others at each poll (10 ms a second on the writer with 100,000 queued for
        -- APNs).
        DROP INDEX push_outbox_due;
        CREATE INDEX push_outbox_due ON push_outbox (platform, next_attempt_at, id) WHERE status = 'queued';
        -- A read mark replaces the read-sync push still queued for each binding (docs/protocol.md §10): found
        -- here, not by reading the whole queue.
        CREATE INDEX push_outbox_read_sync ON push_outbox (wallet, platform, device_token)
          WHERE read_sync = 1 AND status = 'queued';
        """

    static let webhooksSQL = """
        -- Webhooks (docs/protocol.md §11.3): one a channel, what it asks for, and the state of its delivery: one
        -- request at a time, so a claim with a lease, the next attempt and the attempts of the batch at its head.
        CREATE TABLE webhooks (
          channel         BLOB    PRIMARY KEY REFERENCES channels (address) ON DELETE CASCADE,
          url             TEXT    NOT NULL,
          events          TEXT    NOT NULL, -- canonical order: subscribed,unsubscribed,failed
          updated_at      INTEGER NOT NULL, -- Unix seconds
          next_attempt_at INTEGER NOT NULL DEFAULT 0,
          attempts        INTEGER NOT NULL DEFAULT 0,
          claimed_until   INTEGER,
          claimed_by      TEXT
        ) WITHOUT ROWID;
        -- Events waiting for delivery, queued in the transaction of their cause. AUTOINCREMENT: an id is never
        -- reused, so that a receiver may drop a batch whose ids it has seen.
        CREATE TABLE webhook_events (
          id        INTEGER PRIMARY KEY AUTOINCREMENT,
          channel   BLOB    NOT NULL,
          kind      TEXT    NOT NULL CHECK (kind = 'subscribed' OR kind = 'unsubscribed' OR kind = 'failed'),
          fields    TEXT    NOT NULL, -- the event's JSON members after "event" and "id"
          queued_at INTEGER NOT NULL  -- Unix seconds
        );
        CREATE INDEX webhook_events_by_channel ON webhook_events (channel, id);
        -- Keys the server makes once and every node shares: the webhook signer's (§11.3).
        CREATE TABLE server_keys (
          name        TEXT    PRIMARY KEY,
          private_key BLOB    NOT NULL CHECK (length(private_key) = 32),
          created_at  INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    static let idempotentAnswersSQL = """
        -- Idempotent operations (docs/protocol.md §11.2): beside a spent nonce, the digest of the operation that
        -- spent it (32 bytes, what was signed) and that operation's answer (HeraldStore's StoredAnswer bytes),
        -- written in the transaction that spent it. NULL in rows spent before: those copies answer 409.
        ALTER TABLE nonces ADD COLUMN operation BLOB CHECK (operation IS NULL OR length(operation) = 32);
        ALTER TABLE nonces ADD COLUMN answer BLOB;
        """

    static let pushOptionsSQL = """
        -- A notification's push options (docs/protocol.md §11.4), NULL when not given: read with each of its
        -- pushes when claimed, so a broadcast stores them once, not once per push.
        ALTER TABLE notifications ADD COLUMN push_priority TEXT
          CHECK (push_priority IS NULL OR push_priority = 'high' OR push_priority = 'normal');
        ALTER TABLE notifications ADD COLUMN push_ttl INTEGER CHECK (push_ttl IS NULL OR push_ttl >= 0);
        ALTER TABLE notifications ADD COLUMN push_collapse_id TEXT;
        """

    static let delegatesSQL = """
        -- Delegates (docs/protocol.md §11.1): addresses a channel lets sign its Notifications, at most 20 a
        -- channel. A notification keeps who signed it when that was a delegate (NULL: the channel), for the
        -- status answer's signer and the delegate's own reads of it.
        CREATE TABLE delegates (
          channel  BLOB    NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          delegate BLOB    NOT NULL CHECK (length(delegate) = 20),
          added_at INTEGER NOT NULL, -- Unix seconds
          PRIMARY KEY (channel, delegate)
        ) WITHOUT ROWID;
        ALTER TABLE notifications ADD COLUMN signer BLOB CHECK (signer IS NULL OR length(signer) = 20);
        """

    static let unreadCountersSQL = """
        -- A wallet's unread items that are not spam, kept as a number (docs/protocol.md §10): every APNs push
        -- carries it as its badge, so counting index entries for each push cost O(unread) a push (about
        -- 6,400 instructions a recipient of a broadcast even at one unread item, and up to the feed's
        -- 10,000 items). Changed in the statement's transaction by every write that stores, reads or
        -- deletes an unread item; a missing row is 0. The partial index it replaces cost each item an
        -- index entry; marking read now walks feed_items_by_recipient (recipient, spam, sid).
        CREATE TABLE wallet_unread (
          wallet BLOB    NOT NULL PRIMARY KEY CHECK (length(wallet) = 20),
          unread INTEGER NOT NULL CHECK (unread >= 0)
        ) WITHOUT ROWID;
        INSERT INTO wallet_unread (wallet, unread)
          SELECT recipient, COUNT(*) FROM feed_items WHERE read = 0 AND spam = 0 GROUP BY recipient;
        DROP INDEX feed_items_unread;
        """

    static let subscriberControlSQL = """
        -- Subscriber control (docs/protocol.md §10). A channel's settings list, as the JSON text every answer
        -- shows, and its broadcast bucket (ms at which it is full again: 0, full); a subscription's mute (Unix
        -- seconds, 0: none); the subscribers' choices, which go with their subscription; the per-(channel,
        -- recipient) buckets; a feed item's read flag; a push's badge and whether it is a read-sync push.
        ALTER TABLE channels ADD COLUMN settings TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE channels ADD COLUMN broadcast_full_at INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE subscriptions ADD COLUMN muted_until INTEGER NOT NULL DEFAULT 0;
        -- A broadcast looks for muted subscribers only when this says the channel has one.
        CREATE INDEX subscriptions_muted ON subscriptions (channel, muted_until) WHERE muted_until > 0;
        CREATE TABLE subscriber_choices (
          channel    BLOB    NOT NULL,
          subscriber BLOB    NOT NULL,
          setting    TEXT    NOT NULL,
          value      INTEGER NOT NULL, -- a toggle's 1 or 0, a threshold's integer
          PRIMARY KEY (channel, subscriber, setting),
          FOREIGN KEY (channel, subscriber) REFERENCES subscriptions (channel, subscriber) ON DELETE CASCADE
        ) WITHOUT ROWID;
        CREATE TABLE wallet_buckets (
          channel BLOB    NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          wallet  BLOB    NOT NULL CHECK (length(wallet) = 20),
          full_at INTEGER NOT NULL, -- milliseconds
          PRIMARY KEY (channel, wallet)
        ) WITHOUT ROWID;
        ALTER TABLE feed_items ADD COLUMN read INTEGER NOT NULL DEFAULT 0;
        -- The unread count (feeds, badges, the subscriptions listing) counts this index's entries of one wallet.
        CREATE INDEX feed_items_unread ON feed_items (recipient) WHERE read = 0 AND spam = 0;
        ALTER TABLE push_outbox ADD COLUMN badge INTEGER;
        ALTER TABLE push_outbox ADD COLUMN read_sync INTEGER NOT NULL DEFAULT 0;
        """

    static let retentionSQL = """
        -- Retention (CLI.md retention.*) deletes old feed items a notification at a time, then the
        -- notification once no item is left: both need a notification's items found without a scan (and
        -- so does the ON DELETE CASCADE from notifications). Items are inserted in notification order, so
        -- the index grows at its right edge. PostgreSQL's schema has had this index from the start.
        CREATE INDEX feed_items_by_notification ON feed_items (notification);
        """

    static let checksWithoutListsSQL = """
        -- The CHECKs on platform and status compare with each value in turn (OR), not with an IN list: SQLite
        -- builds a temporary B-tree for a list of constants every time a statement checks it, three per
        -- registration (the binding's platform, its setup confirmation's platform and status), about 5% of
        -- a registration's instructions. Same rows, columns, keys and indexes; the rules are unchanged.
        CREATE TABLE bindings_checked (
          wallet       BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform     TEXT    NOT NULL
                               CHECK (platform = 'ios' OR platform = 'ios-sandbox' OR platform = 'android'
                                      OR platform = 'webpush'),
          device_token TEXT    NOT NULL,
          created_at   INTEGER NOT NULL,
          last_seen    INTEGER NOT NULL,
          p256dh       TEXT,
          auth         TEXT,
          PRIMARY KEY (wallet, platform, device_token)
        ) WITHOUT ROWID;
        INSERT INTO bindings_checked (wallet, platform, device_token, created_at, last_seen, p256dh, auth)
          SELECT wallet, platform, device_token, created_at, last_seen, p256dh, auth FROM bindings;
        DROP TABLE bindings;
        ALTER TABLE bindings_checked RENAME TO bindings;
        CREATE INDEX bindings_by_token ON bindings (device_token, platform);

        CREATE TABLE push_outbox_checked (
          id              INTEGER PRIMARY KEY,
          sid             INTEGER,          -- NULL for a setup confirmation
          wallet          BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform        TEXT    NOT NULL
                                  CHECK (platform = 'ios' OR platform = 'ios-sandbox' OR platform = 'android'
                                         OR platform = 'webpush'),
          device_token    TEXT    NOT NULL,
          apns_id         BLOB    NOT NULL DEFAULT (randomblob(16)),
          queued_at       INTEGER NOT NULL, -- Unix seconds
          status          TEXT    NOT NULL DEFAULT 'queued'
                                  CHECK (status = 'queued' OR status = 'sent' OR status = 'failed'
                                         OR status = 'pruned'),
          attempts        INTEGER NOT NULL DEFAULT 0,
          next_attempt_at INTEGER NOT NULL, -- Unix seconds
          last_error      TEXT,
          claimed_until   INTEGER,          -- Unix seconds; NULL: not claimed
          claimed_by      TEXT,             -- the claiming node, for operators
          bisq_message    TEXT,
          bisq_flags      INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO push_outbox_checked
          SELECT id, sid, wallet, platform, device_token, apns_id, queued_at, status, attempts, next_attempt_at,
                 last_error, claimed_until, claimed_by, bisq_message, bisq_flags
          FROM push_outbox;
        DROP TABLE push_outbox;
        ALTER TABLE push_outbox_checked RENAME TO push_outbox;
        CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at, id) WHERE status = 'queued';
        CREATE INDEX push_outbox_by_sid ON push_outbox (sid) WHERE sid IS NOT NULL;
        """

    static let webPushSQL = """
        -- Web Push bindings (docs/protocol.md §9): platform 'webpush', the endpoint URL in device_token, and the
        -- subscription's keys (base64url, unpadded; NULL for device tokens). SQLite cannot change a CHECK,
        -- so bindings and push_outbox are rebuilt with the same rows, columns and indexes.
        CREATE TABLE bindings_webpush (
          wallet       BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush')),
          device_token TEXT    NOT NULL,
          created_at   INTEGER NOT NULL,
          last_seen    INTEGER NOT NULL,
          p256dh       TEXT,
          auth         TEXT,
          PRIMARY KEY (wallet, platform, device_token)
        ) WITHOUT ROWID;
        INSERT INTO bindings_webpush (wallet, platform, device_token, created_at, last_seen)
          SELECT wallet, platform, device_token, created_at, last_seen FROM bindings;
        DROP TABLE bindings;
        ALTER TABLE bindings_webpush RENAME TO bindings;
        CREATE INDEX bindings_by_token ON bindings (device_token, platform);

        CREATE TABLE push_outbox_webpush (
          id              INTEGER PRIMARY KEY,
          sid             INTEGER,          -- NULL for a setup confirmation
          wallet          BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform        TEXT    NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush')),
          device_token    TEXT    NOT NULL,
          apns_id         BLOB    NOT NULL DEFAULT (randomblob(16)),
          queued_at       INTEGER NOT NULL, -- Unix seconds
          status          TEXT    NOT NULL DEFAULT 'queued'
                                  CHECK (status IN ('queued', 'sent', 'failed', 'pruned')),
          attempts        INTEGER NOT NULL DEFAULT 0,
          next_attempt_at INTEGER NOT NULL, -- Unix seconds
          last_error      TEXT,
          claimed_until   INTEGER,          -- Unix seconds; NULL: not claimed
          claimed_by      TEXT,             -- the claiming node, for operators
          bisq_message    TEXT,
          bisq_flags      INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO push_outbox_webpush
          SELECT id, sid, wallet, platform, device_token, apns_id, queued_at, status, attempts, next_attempt_at,
                 last_error, claimed_until, claimed_by, bisq_message, bisq_flags
          FROM push_outbox;
        DROP TABLE push_outbox;
        ALTER TABLE push_outbox_webpush RENAME TO push_outbox;
        CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at, id) WHERE status = 'queued';
        CREATE INDEX push_outbox_by_sid ON push_outbox (sid) WHERE sid IS NOT NULL;
        """

    static let relaySQL = """
        -- The upstream relay (docs/protocol.md §7): installations allowed to push through this server. Only the
        -- SHA-256 of an installation's key is stored.
        CREATE TABLE relay_installations (
          id         TEXT    NOT NULL PRIMARY KEY, -- a lowercase UUID
          name       TEXT    NOT NULL,
          key_hash   BLOB    NOT NULL CHECK (length(key_hash) = 32),
          rate       INTEGER NOT NULL CHECK (rate > 0), -- pushes per second
          created_at INTEGER NOT NULL -- Unix seconds
        ) WITHOUT ROWID;

        -- The secret access tokens are signed with (HS256): created by the first node that starts.
        CREATE TABLE relay_secrets (
          name   TEXT NOT NULL PRIMARY KEY,
          secret BLOB NOT NULL CHECK (length(secret) >= 32)
        ) WITHOUT ROWID;

        -- Outcomes counted per installation; never a payload or a device token.
        CREATE TABLE relay_usage (
          installation TEXT    NOT NULL PRIMARY KEY REFERENCES relay_installations (id) ON DELETE CASCADE,
          sent         INTEGER NOT NULL DEFAULT 0,
          dead         INTEGER NOT NULL DEFAULT 0,
          retry        INTEGER NOT NULL DEFAULT 0,
          failed       INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        """

    static let bisqSQL = """
        -- Bisq relay pushes (docs/protocol.md §8) wait in the same outbox, with neither binding nor feed item: the
        -- opaque encrypted message and its flags are the push. Their wallet is 20 zero bytes (no wallet
        -- signs for them) and nothing here ever reads the message.
        -- The encrypted message as Bisq sent it; NULL for a Herald push.
        ALTER TABLE push_outbox ADD COLUMN bisq_message TEXT;
        -- Flags, added: 1 a sound (snd, isUrgent), 2 mutable-content.
        ALTER TABLE push_outbox ADD COLUMN bisq_flags INTEGER NOT NULL DEFAULT 0;
        """

    static let nodesSQL = """
        -- The database, not a node's memory, judges replays: a spent (signer, nonce) digest is a key, and
        -- spending it twice conflicts. (Digests were unique already in practice; duplicates are dropped.)
        DELETE FROM nonces WHERE rowid NOT IN (SELECT MIN(rowid) FROM nonces GROUP BY digest);
        CREATE UNIQUE INDEX nonces_by_digest ON nonces (digest);

        -- The outbox is claimed, not just read: a worker claims due pushes until claimed_until, and
        -- recording an outcome ends the claim, so that no push is sent by two workers at once.
        ALTER TABLE push_outbox ADD COLUMN claimed_until INTEGER; -- Unix seconds; NULL: not claimed
        ALTER TABLE push_outbox ADD COLUMN claimed_by TEXT;       -- the claiming node, for operators
        """

    static let deadTokensSQL = """
        -- A dead device token (docs/protocol.md §4.3) removes every binding that holds it, whatever the wallet.
        CREATE INDEX bindings_by_token ON bindings (device_token, platform);
        """

    static let notificationsSQL = """
        -- What a channel sent, once per notification: the fields every recipient's item shows.
        -- app, icon and url are the channel's at sending time; title and body of a type 2 are the
        -- generic text (the channel's own are discarded).
        CREATE TABLE notifications (
          id      INTEGER PRIMARY KEY,
          channel BLOB    NOT NULL CHECK (length(channel) = 20),
          type    INTEGER NOT NULL CHECK (type BETWEEN 1 AND 4),
          title   TEXT    NOT NULL,
          body    TEXT    NOT NULL,
          app     TEXT    NOT NULL,
          icon    TEXT    NOT NULL,
          url     TEXT    NOT NULL,
          asub    TEXT    NOT NULL,
          amsg    TEXT    NOT NULL,
          acta    TEXT    NOT NULL,
          aimg    TEXT    NOT NULL,
          epoch   INTEGER NOT NULL -- milliseconds
        );

        -- One feed item per recipient. sid is the EPNS payload_id; AUTOINCREMENT so that a sid is
        -- never reused (clients cache by (wallet, sid)). A recipient not subscribed gets spam = 1.
        CREATE TABLE feed_items (
          sid          INTEGER PRIMARY KEY AUTOINCREMENT,
          recipient    BLOB    NOT NULL CHECK (length(recipient) = 20),
          notification INTEGER NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
          secret       TEXT    NOT NULL DEFAULT '',
          spam         INTEGER NOT NULL DEFAULT 0 CHECK (spam IN (0, 1))
        );
        CREATE INDEX feed_items_by_recipient ON feed_items (recipient, spam, sid);

        -- The push outbox: one row per (item, target binding), written in the same transaction as
        -- the item. A row leaves 'queued' only when a provider accepted it or it is dead. apns_id is
        -- fixed here, when the push is queued, and reused on every retry.
        CREATE TABLE push_outbox (
          id              INTEGER PRIMARY KEY,
          sid             INTEGER,          -- NULL for a setup confirmation
          wallet          BLOB    NOT NULL CHECK (length(wallet) = 20),
          platform        TEXT    NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android')),
          device_token    TEXT    NOT NULL,
          apns_id         BLOB    NOT NULL DEFAULT (randomblob(16)),
          queued_at       INTEGER NOT NULL, -- Unix seconds
          status          TEXT    NOT NULL DEFAULT 'queued'
                                  CHECK (status IN ('queued', 'sent', 'failed', 'pruned')),
          attempts        INTEGER NOT NULL DEFAULT 0,
          next_attempt_at INTEGER NOT NULL, -- Unix seconds
          last_error      TEXT
        );
        CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at, id) WHERE status = 'queued';
        CREATE INDEX push_outbox_by_sid ON push_outbox (sid) WHERE sid IS NOT NULL;
        """

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
