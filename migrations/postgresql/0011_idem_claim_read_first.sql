-- dblock schema 0011 (PostgreSQL): the idempotency claim's INSERT skips a key that exists.
-- dblock_idem_claim (migration 0003, called by sql/postgresql/idem_claim.sql) keeps its
-- signature, its columns, its order of steps and its decisions; only its first statement
-- changes, from INSERT ... VALUES ... ON CONFLICT DO NOTHING to
--   INSERT ... SELECT ... WHERE NOT EXISTS (the key's record) ON CONFLICT DO NOTHING
-- Why: an INSERT that meets an existing key goes through ON CONFLICT's arbiter check, which
-- costs about three times a primary-key read; with the NOT EXISTS the INSERT has no row to
-- insert when the record is visible (a replay, a mismatch, an attempt in progress, a
-- takeover), and the conflict check runs only for a key that is new or whose record is not
-- yet visible. For a new key the NOT EXISTS is one index lookup inside the INSERT's own
-- plan, no statement of its own. ON CONFLICT DO NOTHING stays: a concurrent, uncommitted
-- insert of the same key (invisible to the NOT EXISTS) still makes the INSERT wait for that
-- transaction's end, so a duplicate of a run_once() waits for its commit or rollback, and
-- then reads the record.
-- Each statement of the function runs with a fresh snapshot (READ COMMITTED, VOLATILE). The
-- body avoids EXCEPTION blocks and colons outside string literals (see migration 0003).

CREATE OR REPLACE FUNCTION dblock_idem_claim(p_scope text, p_key text, p_fp text, p_owner text,
  p_lease_ms bigint, p_retention_ms bigint,
  OUT outcome text, OUT status text, OUT attempt integer, OUT recovery_point text,
  OUT response_code integer, OUT response_body text, OUT retry_after_ms bigint)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  r record;
BEGIN
  INSERT INTO dblock_idempotency
    (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
     response_code, response_body, created_at, updated_at, expires_at)
  SELECT p_scope, p_key, p_fp, 'in_progress', p_owner, 1,
         now() + p_lease_ms * interval '1 millisecond', NULL, NULL, NULL, now(), now(),
         now() + p_retention_ms * interval '1 millisecond'
   WHERE NOT EXISTS (SELECT 1 FROM dblock_idempotency e WHERE e.scope = p_scope AND e.idem_key = p_key)
  ON CONFLICT (scope, idem_key) DO NOTHING;
  IF FOUND THEN
    outcome = 'started';
    status = 'in_progress';
    attempt = 1;
    retry_after_ms = 0;
    RETURN NEXT;
    RETURN;
  END IF;

  SELECT i.fingerprint, i.status, i.attempt, i.recovery_point, i.response_code, i.response_body,
         i.lease_expires_at, i.expires_at
    INTO r FROM dblock_idempotency i WHERE i.scope = p_scope AND i.idem_key = p_key;
  IF NOT FOUND THEN
    RETURN;  -- the conflicting row is not visible yet (or gone again) - the caller runs it again
  END IF;
  IF r.expires_at <= now()
     OR (r.status = 'in_progress' AND r.fingerprint = p_fp
         AND (r.lease_expires_at IS NULL OR r.lease_expires_at <= now())) THEN
    -- Past retention - starts over as attempt 1. Same fingerprint, lease run out or reopened -
    -- taken over as attempt N+1, keeping its recovery point.
    UPDATE dblock_idempotency u
       SET fingerprint      = p_fp,
           status           = 'in_progress',
           owner            = p_owner,
           attempt          = CASE WHEN u.expires_at <= now() THEN 1 ELSE u.attempt + 1 END,
           lease_expires_at = now() + p_lease_ms * interval '1 millisecond',
           recovery_point   = CASE WHEN u.expires_at <= now() THEN NULL ELSE u.recovery_point END,
           response_code    = NULL,
           response_body    = NULL,
           created_at       = CASE WHEN u.expires_at <= now() THEN now() ELSE u.created_at END,
           updated_at       = now(),
           expires_at       = now() + p_retention_ms * interval '1 millisecond'
     WHERE u.scope = p_scope AND u.idem_key = p_key
       AND (u.expires_at <= now()
            OR (u.status = 'in_progress' AND u.fingerprint = p_fp
                AND (u.lease_expires_at IS NULL OR u.lease_expires_at <= now())))
    RETURNING u.attempt, u.recovery_point INTO attempt, recovery_point;
    IF FOUND THEN
      outcome = 'started';
      status = 'in_progress';
      retry_after_ms = 0;
      RETURN NEXT;
      RETURN;
    END IF;
    -- Another attempt changed the row first - report the row as it is now.
    SELECT i.fingerprint, i.status, i.attempt, i.recovery_point, i.response_code, i.response_body,
           i.lease_expires_at, i.expires_at
      INTO r FROM dblock_idempotency i WHERE i.scope = p_scope AND i.idem_key = p_key;
    IF NOT FOUND THEN
      RETURN;
    END IF;
  END IF;
  IF r.expires_at <= now() THEN
    RETURN;  -- treated as absent, yet not ours to take over now - the caller runs it again
  END IF;

  -- Nothing written, no row locked - report the record. The fingerprint is compared here too.
  status = r.status;
  attempt = r.attempt;
  recovery_point = r.recovery_point;
  IF r.fingerprint <> p_fp THEN
    outcome = 'mismatch';
  ELSIF r.status = 'in_progress' THEN
    outcome = 'in_progress';
  ELSE
    outcome = 'replay';
    response_code = r.response_code;
    response_body = encode(r.response_body, 'hex');
  END IF;
  IF r.status = 'in_progress' AND r.lease_expires_at IS NOT NULL THEN
    retry_after_ms = GREATEST(0, CAST(ceil(EXTRACT(EPOCH FROM (r.lease_expires_at - now())) * 1000) AS bigint));
  ELSE
    retry_after_ms = 0;
  END IF;
  RETURN NEXT;
END
$fn$;
