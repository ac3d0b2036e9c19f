-- Migration 0012_outbox_by_platform (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- Each push lane claims the pushes of its own platforms (APNs', FCM's, Web Push's), so the due index
-- leads with the platform: on (next_attempt_at, id) alone, a lane with nothing of its own to send read
-- every queued push of the others at each poll, and their rows (38 ms a second with 100,000 queued
-- for APNs).
DROP INDEX push_outbox_due;
CREATE INDEX push_outbox_due ON push_outbox (platform, next_attempt_at, id) WHERE status = 'queued';
-- A read mark replaces the read-sync push still queued for each binding (docs/protocol.md §10): found
-- here, not by reading the whole queue.
CREATE INDEX push_outbox_read_sync ON push_outbox (wallet, platform, device_token)
  WHERE read_sync AND status = 'queued';
