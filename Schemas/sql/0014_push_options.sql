-- Migration 0014_push_options (HeraldStore/Migrations.swift). Never edited once shipped.
-- A notification's push options (docs/protocol.md §11.4), NULL when not given: read with each of its
-- pushes when claimed, so a broadcast stores them once, not once per push.
ALTER TABLE notifications ADD COLUMN push_priority TEXT
  CHECK (push_priority IS NULL OR push_priority = 'high' OR push_priority = 'normal');
ALTER TABLE notifications ADD COLUMN push_ttl INTEGER CHECK (push_ttl IS NULL OR push_ttl >= 0);
ALTER TABLE notifications ADD COLUMN push_collapse_id TEXT;
