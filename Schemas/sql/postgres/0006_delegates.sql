-- Migration 0006_delegates (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- Delegates (docs/protocol.md §11.1): addresses a channel lets sign its Notifications, at most 20 a
-- channel. A notification keeps who signed it when that was a delegate (NULL: the channel), for the
-- status answer's signer and the delegate's own reads of it.
CREATE TABLE delegates (
  channel  bytea  NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
  delegate bytea  NOT NULL CHECK (length(delegate) = 20),
  added_at bigint NOT NULL, -- Unix seconds
  PRIMARY KEY (channel, delegate)
);
ALTER TABLE notifications ADD COLUMN signer bytea CHECK (signer IS NULL OR length(signer) = 20);
