-- Migration 0003_notifications (HeraldStore/Migrations.swift). Never edited once shipped.
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
