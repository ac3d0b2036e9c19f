-- Migration 0012_unread_counters (HeraldStore/Migrations.swift). Never edited once shipped.
-- A wallet's unread items that are not spam, kept as a number (docs/protocol.md §10): every APNs push
-- carries it as its badge, so counting index entries for each push cost O(unread) a push (about
-- 6,400 instructions a recipient of a broadcast even at one unread item, and up to the feed's
-- 10,000 items). Changed in the statement's transaction by every write that stores, reads or
-- deletes an unread item; a missing row is 0. The partial index it replaces cost each item an
-- index entry; marking read now walks feed_items_by_recipient (recipient, spam, sid).
CREATE TABLE wallet_unread (
  wallet BLOB    NOT NULL PRIMARY KEY CHECK (length(wallet) = 20),
  unread INTEGER NOT NULL CHECK (unread >= 0)
) WITHOUT ROWID;
INSERT INTO wallet_unread (wallet, unread)
  SELECT recipient, COUNT(*) FROM feed_items WHERE read = 0 AND spam = 0 GROUP BY recipient;
DROP INDEX feed_items_unread;
