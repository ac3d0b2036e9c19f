-- Migration 0010_retention (HeraldStore/Migrations.swift). Never edited once shipped.
-- Retention (CLI.md retention.*) deletes old feed items a notification at a time, then the
-- notification once no item is left: both need a notification's items found without a scan (and
-- so does the ON DELETE CASCADE from notifications). Items are inserted in notification order, so
-- the index grows at its right edge. PostgreSQL's schema has had this index from the start.
CREATE INDEX feed_items_by_notification ON feed_items (notification);
