-- Migration 0015_idempotent_answers (HeraldStore/Migrations.swift). Never edited once shipped.
-- Idempotent operations (docs/protocol.md §11.2): beside a spent nonce, the digest of the operation that
-- spent it (32 bytes, what was signed) and that operation's answer (HeraldStore's StoredAnswer bytes),
-- written in the transaction that spent it. NULL in rows spent before: those copies answer 409.
ALTER TABLE nonces ADD COLUMN operation BLOB CHECK (operation IS NULL OR length(operation) = 32);
ALTER TABLE nonces ADD COLUMN answer BLOB;
