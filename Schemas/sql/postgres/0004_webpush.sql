-- Migration 0004_webpush (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- Web Push bindings (docs/protocol.md §9): platform 'webpush', the endpoint URL in device_token, and the
-- subscription's keys (base64url, unpadded; NULL for device tokens).
ALTER TABLE bindings DROP CONSTRAINT bindings_platform_check;
ALTER TABLE bindings ADD CONSTRAINT bindings_platform_check
  CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush'));
ALTER TABLE bindings ADD COLUMN p256dh text;
ALTER TABLE bindings ADD COLUMN auth text;
ALTER TABLE push_outbox DROP CONSTRAINT push_outbox_platform_check;
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_platform_check
  CHECK (platform IN ('ios', 'ios-sandbox', 'android', 'webpush'));
