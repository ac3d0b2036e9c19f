-- Migration 0006_relay (HeraldStore/Migrations.swift). Never edited once shipped.
-- The upstream relay (docs/protocol.md §7): installations allowed to push through this server. Only the
-- SHA-256 of an installation's key is stored.
CREATE TABLE relay_installations (
  id         TEXT    NOT NULL PRIMARY KEY, -- a lowercase UUID
  name       TEXT    NOT NULL,
  key_hash   BLOB    NOT NULL CHECK (length(key_hash) = 32),
  rate       INTEGER NOT NULL CHECK (rate > 0), -- pushes per second
  created_at INTEGER NOT NULL -- Unix seconds
) WITHOUT ROWID;

-- The secret access tokens are signed with (HS256): created by the first node that starts.
CREATE TABLE relay_secrets (
  name   TEXT NOT NULL PRIMARY KEY,
  secret BLOB NOT NULL CHECK (length(secret) >= 32)
) WITHOUT ROWID;

-- Outcomes counted per installation; never a payload or a device token.
CREATE TABLE relay_usage (
  installation TEXT    NOT NULL PRIMARY KEY REFERENCES relay_installations (id) ON DELETE CASCADE,
  sent         INTEGER NOT NULL DEFAULT 0,
  dead         INTEGER NOT NULL DEFAULT 0,
  retry        INTEGER NOT NULL DEFAULT 0,
  failed       INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
