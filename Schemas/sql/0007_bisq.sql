-- Migration 0007_bisq (HeraldStore/Migrations.swift). Never edited once shipped.
-- Bisq relay pushes (docs/protocol.md §8) wait in the same outbox, with neither binding nor feed item: the
-- opaque encrypted message and its flags are the push. Their wallet is 20 zero bytes (no wallet
-- signs for them) and nothing here ever reads the message.
-- The encrypted message as Bisq sent it; NULL for a Herald push.
ALTER TABLE push_outbox ADD COLUMN bisq_message TEXT;
-- Flags, added: 1 a sound (snd, isUrgent), 2 mutable-content.
ALTER TABLE push_outbox ADD COLUMN bisq_flags INTEGER NOT NULL DEFAULT 0;
