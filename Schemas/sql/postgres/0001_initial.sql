-- Migration 0001_initial (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
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
