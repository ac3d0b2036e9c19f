-- Migration 0013_outbox_half_free (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- The outbox's pages keep half free (0011 kept 30%): a claim takes a page's pushes together, and the
-- row versions it replaces stay until its commit, so a page needs room for a new version of every
-- push on it. With 30% free, half the claims' updates found no room (48,209 of 100,000 HOT in
-- `push-bench`) and added an entry for their new version to each of the table's indexes; with half,
-- 95,703 of 100,000, and a claim of about 93 pushes took 1.33 ms instead of 1.82 (2026-11-30).
-- Pages written from now on; the outbox's rows are deleted a week after they leave the queue.
ALTER TABLE push_outbox SET (fillfactor = 50);
