-- Migration 0016_webhooks (HeraldStore/Migrations.swift). Never edited once shipped.
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
