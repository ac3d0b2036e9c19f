-- Migration 0007_push_options (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- A notification's push options (docs/protocol.md §11.4), NULL when not given: read with each of its
-- pushes when claimed, so a broadcast stores them once, not once per push.
ALTER TABLE notifications ADD COLUMN push_priority text CHECK (push_priority IN ('high', 'normal'));
ALTER TABLE notifications ADD COLUMN push_ttl bigint CHECK (push_ttl >= 0);
ALTER TABLE notifications ADD COLUMN push_collapse_id text;
