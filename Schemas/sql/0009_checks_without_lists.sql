-- Migration 0009_checks_without_lists (HeraldStore/Migrations.swift). Never edited once shipped.
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
