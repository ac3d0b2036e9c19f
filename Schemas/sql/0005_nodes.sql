-- Migration 0005_nodes (HeraldStore/Migrations.swift). Never edited once shipped.
-- The database, not a node's memory, judges replays: a spent (signer, nonce) digest is a key, and
-- spending it twice conflicts. (Digests were unique already in practice; duplicates are dropped.)
DELETE FROM nonces WHERE rowid NOT IN (SELECT MIN(rowid) FROM nonces GROUP BY digest);
CREATE UNIQUE INDEX nonces_by_digest ON nonces (digest);

-- The outbox is claimed, not just read: a worker claims due pushes until claimed_until, and
-- recording an outcome ends the claim, so that no push is sent by two workers at once.
ALTER TABLE push_outbox ADD COLUMN claimed_until INTEGER; -- Unix seconds; NULL: not claimed
ALTER TABLE push_outbox ADD COLUMN claimed_by TEXT;       -- the claiming node, for operators
