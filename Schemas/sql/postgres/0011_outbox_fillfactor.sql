-- Migration 0011_outbox_fillfactor (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- The outbox's pages keep a third free: a claim changes only claimed_until and claimed_by, which no
-- index holds, so with room on its page PostgreSQL rewrites the row in place (a HOT update) instead
-- of adding an entry for its new version to each of the table's three indexes. Pages written from
-- now on (those written before stay full until their rows are deleted).
ALTER TABLE push_outbox SET (fillfactor = 70);
