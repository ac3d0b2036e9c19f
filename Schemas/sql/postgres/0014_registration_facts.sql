-- Migration 0014_registration_facts (HeraldStorePostgres/PostgresMigrations.swift). Never edited once shipped.
-- A batch of registrations takes its wallets' advisory locks and reads their facts in one round trip
-- (they were two statements). The facts must see every transaction that held one of these locks
-- before: in a VOLATILE function each statement takes a snapshot of its own, so the facts' is taken
-- once the locks are held, as a statement after them would. A wallet's bindings are read once for
-- both facts (whether this one exists, how many there are).
CREATE FUNCTION herald_registration_facts(
    lock_keys bigint[], wallets bytea[], platforms text[], tokens text[], digests bytea[])
RETURNS TABLE (spent boolean, operation bytea, answer bytea, present boolean, held bigint)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
BEGIN
  PERFORM count(pg_advisory_xact_lock(k)) FROM (SELECT k FROM unnest(lock_keys) AS t(k) ORDER BY k) s;
  RETURN QUERY
    SELECT n.digest IS NOT NULL, n.operation, n.answer, c.present, c.held
    FROM unnest(wallets, platforms, tokens, digests) WITH ORDINALITY
         AS r(wallet, platform, token, digest, position)
    CROSS JOIN LATERAL (
      SELECT coalesce(bool_or(b.platform = r.platform AND b.device_token = r.token), false), count(*)
      FROM bindings b WHERE b.wallet = r.wallet) AS c(present, held)
    LEFT JOIN nonces n ON n.digest = r.digest
    ORDER BY r.position;
END
$$;
