-- Migration 0010_items_without_trigger (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- A feed item's notification is no longer a foreign key: its check ran as a trigger for every item
-- inserted, 4.8 µs of a broadcast's 31 µs a recipient (481 ms of a 100,000-subscriber broadcast).
-- Nothing relied on its cascade: an item is written only with its notification, in that
-- transaction, and retention deletes a notification only once no item is left (docs/operating.md).
ALTER TABLE feed_items DROP CONSTRAINT feed_items_notification_fkey;
