-- Migration 0005_subscriber_control (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
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
