-- What PostgreSQL itself spends on a push's outbox statements, with no client, protocol or node: the claim
-- (ClaimDuePushesStatement) and the outcome (RecordOutcomesStatement) of PreparedOutboxStatements.swift,
-- written out here as the server prepares them, run in a loop inside the server by a procedure: claim LIMIT
-- pushes past the last claim's position, commit, record them sent, commit, ROUNDS times. Keep the two
-- statements in step with the Swift ones. Loaded and called by scripts/load/outbox-floor.sh.
CREATE OR REPLACE PROCEDURE herald_outbox_floor(rounds int, claim_limit int) LANGUAGE plpgsql AS $$
DECLARE
  pos_t bigint := 0; pos_id bigint := 0; ids bigint[]; r record; n int := 0;
BEGIN
  FOR i IN 1..rounds LOOP
    ids := ARRAY[]::bigint[];
    FOR r IN
      WITH o AS (
        UPDATE push_outbox SET claimed_until = 9999999999, claimed_by = 'outbox-floor'
        WHERE id = ANY(ARRAY(
          SELECT c.id FROM unnest('{ios,ios-sandbox}'::text[]) AS p(platform)
          CROSS JOIN LATERAL (SELECT id, next_attempt_at FROM push_outbox
                              WHERE platform = p.platform AND status = 'queued' AND next_attempt_at <= 9999999999
                                AND (next_attempt_at, id) > (pos_t, pos_id)
                                AND (claimed_until IS NULL OR claimed_until <= 9999999999)
                              ORDER BY next_attempt_at, id LIMIT claim_limit
                              FOR UPDATE SKIP LOCKED) c
          ORDER BY c.next_attempt_at, c.id LIMIT claim_limit))
        RETURNING *)
      SELECT o.id, o.sid, o.wallet, o.platform, o.device_token, o.apns_id, o.queued_at, o.attempts, f.secret,
       n.type, n.title, n.body, n.app, n.icon, n.url, n.asub, n.amsg, n.acta, n.aimg, n.epoch,
       o.bisq_message IS NOT NULL OR b.wallet IS NOT NULL AS live, o.bisq_message, o.bisq_flags, b.p256dh, b.auth, o.badge, o.read_sync,
       n.channel, n.push_priority, n.push_ttl, n.push_collapse_id, o.next_attempt_at
      FROM o LEFT JOIN feed_items f ON f.sid = o.sid
              LEFT JOIN notifications n ON n.id = f.notification
              LEFT JOIN bindings b ON b.wallet = o.wallet AND b.platform = o.platform AND b.device_token = o.device_token
      ORDER BY o.next_attempt_at, o.id
    LOOP
      ids := ids || r.id; pos_t := r.next_attempt_at; pos_id := r.id;
    END LOOP;
    COMMIT;
    UPDATE push_outbox o
    SET status = x.status, attempts = o.attempts + x.counted, next_attempt_at = x.next_attempt_at,
        last_error = CASE WHEN x.has_error THEN x.error ELSE o.last_error END,
        claimed_until = NULL, claimed_by = NULL
    FROM unnest(ids, array_fill('sent'::text, ARRAY[cardinality(ids)]), array_fill(0::bigint, ARRAY[cardinality(ids)]),
                array_fill(''::text, ARRAY[cardinality(ids)]), array_fill(false, ARRAY[cardinality(ids)]), array_fill(1, ARRAY[cardinality(ids)]))
         AS x(id, status, next_attempt_at, error, has_error, counted)
    WHERE o.id = x.id AND o.status = 'queued' AND o.claimed_by = 'outbox-floor';
    COMMIT;
    n := n + cardinality(ids);
  END LOOP;
  IF n < rounds * claim_limit THEN
    RAISE EXCEPTION 'only % pushes were queued past the last claim, not %', n, rounds * claim_limit;
  END IF;
END $$;
