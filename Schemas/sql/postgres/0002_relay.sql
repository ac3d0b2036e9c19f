-- Migration 0002_relay (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- The upstream relay (docs/protocol.md §7): installations allowed to push through this server. Only the
-- SHA-256 of an installation's key is stored.
CREATE TABLE relay_installations (
  id         text   PRIMARY KEY, -- a lowercase UUID
  name       text   NOT NULL,
  key_hash   bytea  NOT NULL CHECK (length(key_hash) = 32),
  rate       bigint NOT NULL CHECK (rate > 0), -- pushes per second
  created_at bigint NOT NULL -- Unix seconds
);

-- The secret access tokens are signed with (HS256): created by the first node that starts, so
-- that every node checks every token.
CREATE TABLE relay_secrets (
  name   text  PRIMARY KEY,
  secret bytea NOT NULL CHECK (length(secret) >= 32)
);

-- Outcomes counted per installation; never a payload or a device token.
CREATE TABLE relay_usage (
  installation text   PRIMARY KEY REFERENCES relay_installations (id) ON DELETE CASCADE,
  sent         bigint NOT NULL DEFAULT 0,
  dead         bigint NOT NULL DEFAULT 0,
  retry        bigint NOT NULL DEFAULT 0,
  failed       bigint NOT NULL DEFAULT 0
);
