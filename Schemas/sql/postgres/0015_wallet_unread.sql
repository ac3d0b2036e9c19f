-- Migration 0015_wallet_unread (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- A wallet's unread items that are not spam (docs/protocol.md §10) as two numbers whose difference it
-- is: the items stored (`added`, raised by the send that stores them) and those taken away since
-- (`taken`, raised by a read mark or by retention deleting them unread). A badge was a count of the
-- wallet's entries in feed_items_unread for every push, so a send's cost grew with its recipients'
-- unread items (0.042 ms a push at 100 of them, up to retention.feedItemsPerWallet, 10,000 by
-- default), and so did every feed read. Two rows, not one: a broadcast holds the row of each of its
-- recipients until it commits (seconds for a million), and a read mark or retention changing that
-- row would wait for it, holding its write lane. Pages keep half free, so updates stay on their page.
CREATE TABLE wallet_unread_added (
  wallet bytea  PRIMARY KEY CHECK (length(wallet) = 20),
  added  bigint NOT NULL CHECK (added >= 0)
) WITH (fillfactor = 50);
CREATE TABLE wallet_unread_taken (
  wallet bytea  PRIMARY KEY CHECK (length(wallet) = 20),
  taken  bigint NOT NULL CHECK (taken >= 0)
) WITH (fillfactor = 50);
INSERT INTO wallet_unread_added (wallet, added)
  SELECT recipient, count(*) FROM feed_items WHERE NOT read AND NOT spam GROUP BY recipient;
