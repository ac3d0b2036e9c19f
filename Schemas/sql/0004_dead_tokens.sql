-- Migration 0004_dead_tokens (HeraldStore/Migrations.swift). Never edited once shipped.
-- A dead device token (docs/protocol.md §4.3) removes every binding that holds it, whatever the wallet.
CREATE INDEX bindings_by_token ON bindings (device_token, platform);
