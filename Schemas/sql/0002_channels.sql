-- Migration 0002_channels (HeraldStore/Migrations.swift). Never edited once shipped.
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
