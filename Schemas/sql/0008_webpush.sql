-- Migration 0008_webpush (HeraldStore/Migrations.swift). Never edited once shipped.
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
