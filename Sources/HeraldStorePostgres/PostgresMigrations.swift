/// The PostgreSQL schema, as numbered migrations. A migration is never edited once shipped: changes
/// are new migrations. The SQL is mirrored in `Schemas/sql/postgres/` for operators; a test keeps the
/// two identical. The same tables as the SQLite store, in PostgreSQL's own types: `bytea` with its
/// length checked, `bigint` times, identity columns for ids and sids (never reused), a key on the nonce
/// digest (the database judges replays) and the outbox's claim columns.
enum PostgresMigrations {
    static let all: [(version: Int, name: String, sql: String)] = [
        (1, "0001_initial", initialSQL),
        (2, "0002_relay", relaySQL),
        (3, "0003_bisq", bisqSQL),
        (4, "0004_webpush", webPushSQL),
        (5, "0005_subscriber_control", subscriberControlSQL),
        (6, "0006_delegates", delegatesSQL),
        (7, "0007_push_options", pushOptionsSQL),
        (8, "0008_idempotent_answers", idempotentAnswersSQL),
        (9, "0009_webhooks", webhooksSQL),
        (10, "0010_items_without_trigger", itemsWithoutTriggerSQL),
        (11, "0011_outbox_fillfactor", outboxFillfactorSQL),
        (12, "0012_outbox_by_platform", outboxByPlatformSQL),
        (13, "0013_outbox_half_free", outboxHalfFreeSQL),
        (14, "0014_registration_facts", registrationFactsSQL),
        (15, "0015_wallet_unread", walletUnreadSQL),
    ]

    static let walletUnreadSQL = """
        -- A wallet's unread items that are not spam (docs/protocol.md §10) as two numbers whose difference it
        -- is: the items stored (`added`, raised by the send that stores them) and those taken away since
        -- (`taken`, raised by a read mark or by retention deleting them unread). A badge was a count of the
        -- wallet's entries in feed_items_unread for every push, so a send's cost grew with its recipients'
        -- unread items (0.042 ms a push at 100 of them, up to retention.feedItemsPerWallet, 10,000 by
        -- default), and so did every feed read. Two rows, not one: a broadcast holds the row of each of its
        -- recipients until it commits (seconds for a million), and a read mark or retention changing that
        -- row would wait for it, holding its write lane. Pages keep half free, so updates stay on their page.
        CREATE TABLE wallet_unread_added (
          wallet bytea  PRIMARY KEY CHECK (length(wallet) = 20),
          added  bigint NOT NULL CHECK (added >= 0)
        ) WITH (fillfactor = 50);
        CREATE TABLE wallet_unread_taken (
          wallet bytea  PRIMARY KEY CHECK (length(wallet) = 20),
          taken  bigint NOT NULL CHECK (taken >= 0)
        ) WITH (fillfactor = 50);
        INSERT INTO wallet_unread_added (wallet, added)
          SELECT recipient, count(*) FROM feed_items WHERE NOT read AND NOT spam GROUP BY recipient;
        """

    static let registrationFactsSQL = """
        -- A batch of registrations takes its wallets' advisory locks and reads their facts in one round trip
        -- (they were two statements). The facts must see every transaction that held one of these locks
        -- before: in a VOLATILE function each statement takes a snapshot of its own, so the facts' is taken
        -- once the locks are held, as a statement after them would. A wallet's bindings are read once for
        -- both facts (whether this one exists, how many there are).
        CREATE FUNCTION herald_registration_facts(
            lock_keys bigint[], wallets bytea[], platforms text[], tokens text[], digests bytea[])
        RETURNS TABLE (spent boolean, operation bytea, answer bytea, present boolean, held bigint)
        LANGUAGE plpgsql VOLATILE AS $$
        #variable_conflict use_column
        BEGIN
          PERFORM count(pg_advisory_xact_lock(k)) FROM (SELECT k FROM unnest(lock_keys) AS t(k) ORDER BY k) s;
          RETURN QUERY
            SELECT n.digest IS NOT NULL, n.operation, n.answer, c.present, c.held
            FROM unnest(wallets, platforms, tokens, digests) WITH ORDINALITY
                 AS r(wallet, platform, token, digest, position)
            CROSS JOIN LATERAL (
              SELECT coalesce(bool_or(b.platform = r.platform AND b.device_token = r.token), false), count(*)
              FROM bindings b WHERE b.wallet = r.wallet) AS c(present, held)
            LEFT JOIN nonces n ON n.digest = r.digest
            ORDER BY r.position;
        END
        $$;
        """

    static let outboxHalfFreeSQL = """
        -- The outbox's pages keep half free (0011 kept 30%): a claim takes a page's pushes together, and the
        -- row versions it replaces stay until its commit, so a page needs room for a new version of every
        -- push on it. With 30% free, half the claims' updates found no room (48,209 of 100,000 HOT in
        -- `push-bench`) and added an entry for their new version to each of the table's indexes; with half,
        -- 95,703 of 100,000, and a claim of about 93 pushes took 1.33 ms instead of 1.82 (2026-11-30).
        -- Pages written from now on; the outbox's rows are deleted a week after they leave the queue.
        ALTER TABLE push_outbox SET (fillfactor = 50);
        """

    static let outboxByPlatformSQL = """
        -- Each push lane claims the pushes of its own platforms (APNs', FCM's, Web Push's), so the due index
        -- leads with the platform: on (next_attempt_at, id) alone, a lane with nothing of its own to send read
        -- every queued push of the others at each poll, and their rows (38 ms a second with 100,000 queued
        -- for APNs).
        DROP INDEX push_outbox_due;
        CREATE INDEX push_outbox_due ON push_outbox (platform, next_attempt_at, id) WHERE status = 'queued';
        -- A read mark replaces the read-sync push still queued for each binding (docs/protocol.md §10): found
        -- here, not by reading the whole queue.
        CREATE INDEX push_outbox_read_sync ON push_outbox (wallet, platform, device_token)
          WHERE read_sync AND status = 'queued';
        """

    static let outboxFillfactorSQL = """
        -- The outbox's pages keep a third free: a claim changes only claimed_until and claimed_by, which no
        -- index holds, so with room on its page PostgreSQL rewrites the row in place (a HOT update) instead
        -- of adding an entry for its new version to each of the table's three indexes. Pages written from
        -- now on (those written before stay full until their rows are deleted).
        ALTER TABLE push_outbox SET (fillfactor = 70);
        """

    static let itemsWithoutTriggerSQL = """
        -- A feed item's notification is no longer a foreign key: its check ran as a trigger for every item
        -- inserted, 4.8 µs of a broadcast's 31 µs a recipient (481 ms of a 100,000-subscriber broadcast).
        -- Nothing relied on its cascade: an item is written only with its notification, in that
        -- transaction, and retention deletes a notification only once no item is left (docs/operating.md).
        ALTER TABLE feed_items DROP CONSTRAINT feed_items_notification_fkey;
        """

    static let webhooksSQL = """
        -- Webhooks (docs/protocol.md §11.3): one a channel, what it asks for, and the state of its delivery: one
        -- request at a time, so a claim with a lease, the next attempt and the attempts of the batch at its head.
        CREATE TABLE webhooks (
          channel         bytea  PRIMARY KEY REFERENCES channels (address) ON DELETE CASCADE,
          url             text   NOT NULL,
          events          text   NOT NULL, -- canonical order: subscribed,unsubscribed,failed
          updated_at      bigint NOT NULL, -- Unix seconds
          next_attempt_at bigint NOT NULL DEFAULT 0,
          attempts        bigint NOT NULL DEFAULT 0,
          claimed_until   bigint,
          claimed_by      text
        );
        -- Events waiting for delivery, queued in the transaction of their cause; ids are never reused.
        CREATE TABLE webhook_events (
          id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          channel   bytea  NOT NULL CHECK (length(channel) = 20),
          kind      text   NOT NULL CHECK (kind IN ('subscribed', 'unsubscribed', 'failed')),
          fields    text   NOT NULL, -- the event's JSON members after "event" and "id"
          queued_at bigint NOT NULL  -- Unix seconds
        );
        CREATE INDEX webhook_events_by_channel ON webhook_events (channel, id);
        -- Keys the server makes once and every node shares: the webhook signer's (§11.3).
        CREATE TABLE server_keys (
          name        text   PRIMARY KEY,
          private_key bytea  NOT NULL CHECK (length(private_key) = 32),
          created_at  bigint NOT NULL
        );
        """

    static let idempotentAnswersSQL = """
        -- Idempotent operations (docs/protocol.md §11.2): beside a spent nonce, the digest of the operation that
        -- spent it (32 bytes, what was signed) and that operation's answer (HeraldStore's StoredAnswer bytes),
        -- written in the transaction that spent it. NULL in rows spent before: those copies answer 409.
        ALTER TABLE nonces ADD COLUMN operation bytea CHECK (length(operation) = 32);
        ALTER TABLE nonces ADD COLUMN answer bytea;
        """

    static let pushOptionsSQL = """
        -- A notification's push options (docs/protocol.md §11.4), NULL when not given: read with each of its
        -- pushes when claimed, so a broadcast stores them once, not once per push.
        ALTER TABLE notifications ADD COLUMN push_priority text CHECK (push_priority IN ('high', 'normal'));
        ALTER TABLE notifications ADD COLUMN push_ttl bigint CHECK (push_ttl >= 0);
        ALTER TABLE notifications ADD COLUMN push_collapse_id text;
        """

    static let delegatesSQL = """
        -- Delegates (docs/protocol.md §11.1): addresses a channel lets sign its Notifications, at most 20 a
        -- channel. A notification keeps who signed it when that was a delegate (NULL: the channel), for the
        -- status answer's signer and the delegate's own reads of it.
        CREATE TABLE delegates (
          channel  bytea  NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          delegate bytea  NOT NULL CHECK (length(delegate) = 20),
          added_at bigint NOT NULL, -- Unix seconds
          PRIMARY KEY (channel, delegate)
        );
        ALTER TABLE notifications ADD COLUMN signer bytea CHECK (signer IS NULL OR length(signer) = 20);
        """

    static let subscriberControlSQL = """
        -- Subscriber control (docs/protocol.md §10). A channel's settings list, as the JSON text every answer
        -- shows, and its broadcast bucket (ms at which it is full again: 0, full); a subscription's mute (Unix
        -- seconds, 0: none); the subscribers' choices, which go with their subscription; the per-(channel,
        -- recipient) buckets; a feed item's read flag; a push's badge and whether it is a read-sync push.
        ALTER TABLE channels ADD COLUMN settings text NOT NULL DEFAULT '[]';
        ALTER TABLE channels ADD COLUMN broadcast_full_at bigint NOT NULL DEFAULT 0;
        ALTER TABLE subscriptions ADD COLUMN muted_until bigint NOT NULL DEFAULT 0;
        -- A broadcast looks for muted subscribers only when this says the channel has one.
        CREATE INDEX subscriptions_muted ON subscriptions (channel, muted_until) WHERE muted_until > 0;
        CREATE TABLE subscriber_choices (
          channel    bytea  NOT NULL,
          subscriber bytea  NOT NULL,
          setting    text   NOT NULL,
          value      bigint NOT NULL, -- a toggle's 1 or 0, a threshold's integer
          PRIMARY KEY (channel, subscriber, setting),
          FOREIGN KEY (channel, subscriber) REFERENCES subscriptions (channel, subscriber) ON DELETE CASCADE
        );
        CREATE TABLE wallet_buckets (
          channel bytea  NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          wallet  bytea  NOT NULL CHECK (length(wallet) = 20),
          full_at bigint NOT NULL, -- milliseconds
          PRIMARY KEY (channel, wallet)
        );
        ALTER TABLE feed_items ADD COLUMN read boolean NOT NULL DEFAULT false;
        -- The unread count (feeds, badges, the subscriptions listing) counts this index's entries of one wallet.
        CREATE INDEX feed_items_unread ON feed_items (recipient) WHERE NOT read AND NOT spam;
        ALTER TABLE push_outbox ADD COLUMN badge integer;
        ALTER TABLE push_outbox ADD COLUMN read_sync boolean NOT NULL DEFAULT false;
        """

    static let webPushSQL = """
        -- Web Push bindings (docs/protocol.md §9): platform 'webpush', the endpoint URL in device_token, and the
        -- subscription's keys (base64url, unpadded; NULL for device tokens).
        ALTER TABLE bindings DROP CONSTRAINT bindings_platform_check;
        ALTER TABLE bindings ADD CONSTRAINT bindings_platform_check
          CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush'));
        ALTER TABLE bindings ADD COLUMN p256dh text;
        ALTER TABLE bindings ADD COLUMN auth text;
        ALTER TABLE push_outbox DROP CONSTRAINT push_outbox_platform_check;
        ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_platform_check
          CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush'));
        """

    static let relaySQL = """
        -- The upstream relay (docs/protocol.md §7): installations allowed to push through this server. Only the
        -- SHA-256 of an installation's key is stored.
        CREATE TABLE relay_installations (
          id         text   PRIMARY KEY, -- a lowercase UUID
          name       text   NOT NULL,
          key_hash   bytea  NOT NULL CHECK (length(key_hash) = 32),
          rate       bigint NOT NULL CHECK (rate > 0), -- pushes per second
          created_at bigint NOT NULL -- Unix seconds
        );

        -- The secret access tokens are signed with (HS256): created by the first node that starts, so
        -- that every node checks every token.
        CREATE TABLE relay_secrets (
          name   text  PRIMARY KEY,
          secret bytea NOT NULL CHECK (length(secret) >= 32)
        );

        -- Outcomes counted per installation; never a payload or a device token.
        CREATE TABLE relay_usage (
          installation text   PRIMARY KEY REFERENCES relay_installations (id) ON DELETE CASCADE,
          sent         bigint NOT NULL DEFAULT 0,
          dead         bigint NOT NULL DEFAULT 0,
          retry        bigint NOT NULL DEFAULT 0,
          failed       bigint NOT NULL DEFAULT 0
        );
        """

    static let bisqSQL = """
        -- Bisq relay pushes (docs/protocol.md §8) wait in the same outbox, with neither binding nor feed item: the
        -- opaque encrypted message and its flags are the push. Their wallet is 20 zero bytes (no wallet
        -- signs for them) and nothing here ever reads the message.
        -- The encrypted message as Bisq sent it; NULL for a Herald push.
        ALTER TABLE push_outbox ADD COLUMN bisq_message text;
        -- Flags, added: 1 a sound (snd, isUrgent), 2 mutable-content.
        ALTER TABLE push_outbox ADD COLUMN bisq_flags smallint NOT NULL DEFAULT 0;
        """

    /// The newest schema version this code knows.
    static var latest: Int { all.map(\.version).max() ?? 0 }

    static let initialSQL = """
        -- Device bindings: one row per (wallet, platform, token).
        CREATE TABLE bindings (
          wallet       bytea  NOT NULL CHECK (length(wallet) = 20),
          platform     text   NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android')),
          device_token text   NOT NULL,
          created_at   bigint NOT NULL, -- Unix seconds
          last_seen    bigint NOT NULL, -- Unix seconds
          PRIMARY KEY (wallet, platform, device_token)
        );
        -- A dead device token (docs/protocol.md §4.3) removes every binding that holds it, whatever the wallet.
        CREATE INDEX bindings_by_token ON bindings (device_token, platform);

        -- Spent nonces: digest = keccak256(signer || nonce as 32 bytes)[0..16). The key judges replays: a
        -- change spends its nonce with an insert in its own transaction, and a conflict is a replay. Rows go
        -- once retained_until (expiresAt + skew) has passed.
        CREATE TABLE nonces (
          digest         bytea  PRIMARY KEY CHECK (length(digest) = 16),
          retained_until bigint NOT NULL
        );
        CREATE INDEX nonces_by_retention ON nonces (retained_until);

        -- The public key recovered from each wallet's verified signatures (65 bytes, 04 || X || Y); the
        -- first one recorded stands (the address is its hash, so it never changes).
        CREATE TABLE wallet_keys (
          wallet     bytea  PRIMARY KEY CHECK (length(wallet) = 20),
          public_key bytea  NOT NULL CHECK (length(public_key) = 65),
          updated_at bigint NOT NULL
        );

        -- Channels: sender wallets, managed by operators (`herald channel add`).
        CREATE TABLE channels (
          address    bytea  PRIMARY KEY CHECK (length(address) = 20),
          name       text   NOT NULL,
          icon       text   NOT NULL DEFAULT '',
          url        text   NOT NULL DEFAULT '',
          created_at bigint NOT NULL
        );

        -- Subscriptions: a subscriber follows a channel since a time.
        CREATE TABLE subscriptions (
          channel    bytea  NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
          subscriber bytea  NOT NULL CHECK (length(subscriber) = 20),
          since      bigint NOT NULL,
          PRIMARY KEY (channel, subscriber)
        );
        CREATE INDEX subscriptions_by_subscriber ON subscriptions (subscriber);

        -- What a channel sent, once per notification: the fields every recipient's item shows. app, icon
        -- and url are the channel's at sending time; title and body of a type 2 are the generic text.
        CREATE TABLE notifications (
          id      bigint   GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          channel bytea    NOT NULL CHECK (length(channel) = 20),
          type    smallint NOT NULL CHECK (type BETWEEN 1 AND 4),
          title   text     NOT NULL,
          body    text     NOT NULL,
          app     text     NOT NULL,
          icon    text     NOT NULL,
          url     text     NOT NULL,
          asub    text     NOT NULL,
          amsg    text     NOT NULL,
          acta    text     NOT NULL,
          aimg    text     NOT NULL,
          epoch   bigint   NOT NULL -- milliseconds
        );

        -- One feed item per recipient. sid is the EPNS payload_id, from a sequence: never reused (clients
        -- cache by (wallet, sid)) and increasing across every node. A recipient not subscribed gets spam.
        CREATE TABLE feed_items (
          sid          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          recipient    bytea   NOT NULL CHECK (length(recipient) = 20),
          notification bigint  NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
          secret       text    NOT NULL DEFAULT '',
          spam         boolean NOT NULL DEFAULT false
        );
        CREATE INDEX feed_items_by_recipient ON feed_items (recipient, spam, sid);
        CREATE INDEX feed_items_by_notification ON feed_items (notification);

        -- The push outbox: one row per (item, target binding), written in the same transaction as the
        -- item. A row leaves 'queued' only when a provider accepted it or it is dead. apns_id is fixed
        -- here, when the push is queued, and reused on every retry. A worker claims due rows until
        -- claimed_until (FOR UPDATE SKIP LOCKED), and recording an outcome ends the claim.
        CREATE TABLE push_outbox (
          id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          sid             bigint,          -- NULL for a setup confirmation
          wallet          bytea  NOT NULL CHECK (length(wallet) = 20),
          platform        text   NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android')),
          device_token    text   NOT NULL,
          apns_id         bytea  NOT NULL DEFAULT uuid_send(gen_random_uuid()) CHECK (length(apns_id) = 16),
          queued_at       bigint NOT NULL, -- Unix seconds
          status          text   NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed', 'pruned')),
          attempts        integer NOT NULL DEFAULT 0,
          next_attempt_at bigint NOT NULL, -- Unix seconds
          last_error      text,
          claimed_until   bigint,          -- Unix seconds; NULL: not claimed
          claimed_by      text             -- the claiming node, for operators
        );
        CREATE INDEX push_outbox_due ON push_outbox (next_attempt_at, id) WHERE status = 'queued';
        CREATE INDEX push_outbox_by_sid ON push_outbox (sid) WHERE sid IS NOT NULL;
        """
}
