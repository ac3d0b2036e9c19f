-- Migration 0009_webhooks (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
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
