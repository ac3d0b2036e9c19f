-- Migration 0001_initial (HeraldStore/Migrations.swift). Never edited once shipped.
-- Device bindings: one row per (wallet, platform, token). Wallets are 20-byte blobs.
CREATE TABLE bindings (
  wallet       BLOB    NOT NULL CHECK (length(wallet) = 20),
  platform     TEXT    NOT NULL CHECK (platform IN ('ios', 'ios-sandbox', 'android')),
  device_token TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  last_seen    INTEGER NOT NULL,
  PRIMARY KEY (wallet, platform, device_token)
) WITHOUT ROWID;
CREATE INDEX bindings_by_token ON bindings (platform, device_token);
CREATE INDEX bindings_by_last_seen ON bindings (last_seen);

-- Spent nonces: (signer, nonce) is accepted once, remembered until retained_until.
CREATE TABLE nonces (
  signer         BLOB    NOT NULL CHECK (length(signer) = 20),
  nonce          BLOB    NOT NULL CHECK (length(nonce) = 32),
  retained_until INTEGER NOT NULL,
  PRIMARY KEY (signer, nonce)
) WITHOUT ROWID;
CREATE INDEX nonces_by_retention ON nonces (retained_until);

-- The public key recovered from each wallet's verified signatures (65 bytes, 04 || X || Y).
CREATE TABLE wallet_keys (
  wallet     BLOB    NOT NULL PRIMARY KEY CHECK (length(wallet) = 20),
  public_key BLOB    NOT NULL CHECK (length(public_key) = 65),
  updated_at INTEGER NOT NULL
) WITHOUT ROWID;

