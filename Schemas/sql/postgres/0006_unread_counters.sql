-- Migration 0006_unread_counters (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- A wallet's unread items that are not spam, kept as a number (docs/protocol.md §10): every APNs push
-- carries it as its badge, so counting index entries for each push cost O(unread) a push. Changed in
-- the transaction of every write that stores, reads or deletes an unread item, always in wallet
-- order (so that two transactions never wait on each other's rows in a cycle); a missing row is 0.
-- The partial index it replaces cost each item an index entry; marking read now walks
-- feed_items_by_recipient (recipient, spam, sid).
CREATE TABLE wallet_unread (
  wallet bytea  NOT NULL PRIMARY KEY CHECK (length(wallet) = 20),
  unread bigint NOT NULL CHECK (unread >= 0)
);
INSERT INTO wallet_unread (wallet, unread)
  SELECT recipient, count(*) FROM feed_items WHERE NOT read AND NOT spam GROUP BY recipient;
DROP INDEX feed_items_unread;
