-- Migration 0013_delegates (HeraldStore/Migrations.swift). Never edited once shipped.
-- Delegates (docs/protocol.md §11.1): addresses a channel lets sign its Notifications, at most 20 a
-- channel. A notification keeps who signed it when that was a delegate (NULL: the channel), for the
-- status answer's signer and the delegate's own reads of it.
CREATE TABLE delegates (
  channel  BLOB    NOT NULL REFERENCES channels (address) ON DELETE CASCADE,
  delegate BLOB    NOT NULL CHECK (length(delegate) = 20),
  added_at INTEGER NOT NULL, -- Unix seconds
  PRIMARY KEY (channel, delegate)
) WITHOUT ROWID;
ALTER TABLE notifications ADD COLUMN signer BLOB CHECK (signer IS NULL OR length(signer) = 20);
