-- dblock schema 0003 (PostgreSQL): the lock acquire and the idempotency claim as PL/pgSQL
-- functions that read first and write only when they must. sql/postgresql/lock_acquire.sql
-- and idem_claim.sql call them: still one statement, one round trip.
-- Why: the former one-statement CTEs made PostgreSQL set up every branch on every call (the
-- INSERT node with its ON CONFLICT arbiter and index opens, the UPDATE, the UNION ALL read),
-- even when the call needed one of them; a refused try paid for an INSERT it never ran.
-- CREATE OR REPLACE under the migration lock (see lib/core/migrate.cpp); the bodies avoid
-- EXCEPTION blocks (each would start a subtransaction) and colons outside string literals
-- (SOCI scans statement text for :name placeholders).

-- Acquire or re-enter lease lock p_name for p_owner with a TTL of p_ttl_ms ms.
-- One row: granted 1 (fresh grant or takeover of an expired row with a new fence from
-- dblock_fence_seq, drawn under the name's grant lock (below), or re-entry by the same live owner with holds + 1 and the same fence)
-- or granted 0 (a live row of another owner, as read). No row only when the upsert lost a
-- race and the row was gone again when read back. A refused try runs only the first SELECT:
-- no tuple locked, no transaction id, no WAL. Expiry is judged by the server's now() only.
CREATE OR REPLACE FUNCTION dblock_lock_acquire(p_name text, p_owner text, p_ttl_ms bigint, p_holder text,
  OUT granted integer, OUT fence bigint, OUT holds integer, OUT holder varchar,
  OUT expires_at text, OUT expires_in_ms bigint)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  v_owner varchar;
  v_expires timestamptz;
BEGIN
  SELECT l.owner, l.fence, l.holds, l.holder, l.expires_at INTO v_owner, fence, holds, holder, v_expires
    FROM dblock_locks l WHERE l.name = p_name;
  IF FOUND AND v_owner <> p_owner AND v_expires > now() THEN
    granted = 0;  -- the common refusal, read-only
  ELSE
    -- Free, expired or ours - the upsert. Its WHERE re-checks the newest row version under
    -- the row lock, so a holder that committed after the read above still wins.
    -- Grants of one name draw their fences one at a time: this transaction-scoped advisory
    -- lock (the two-int key space, class 'dblk' = 1684171883, apart from the one-bigint keys
    -- of session locks and of applications) is held from before nextval until the commit.
    -- Without it a value drawn in VALUES could be overtaken by another owner's whole grant
    -- and release before this row reaches the table, and this grant would carry the SMALLER
    -- token. No WAL, no flush: the lock manager only. hashtext collisions merely make two
    -- names' grants take turns.
    PERFORM pg_advisory_xact_lock(1684171883, hashtext(p_name));
    INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder)
    VALUES (p_name, p_owner, 1, nextval('dblock_fence_seq'), now(),
            now() + p_ttl_ms * interval '1 millisecond', p_holder)
    ON CONFLICT (name) DO UPDATE SET
      holds       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.holds + 1 ELSE 1 END,
      fence       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.fence ELSE EXCLUDED.fence END,
      acquired_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.acquired_at ELSE now() END,
      owner       = EXCLUDED.owner,
      expires_at  = EXCLUDED.expires_at,
      holder      = EXCLUDED.holder
    WHERE l.owner = EXCLUDED.owner OR l.expires_at <= now()
    RETURNING l.fence, l.holds, l.holder, l.expires_at INTO fence, holds, holder, v_expires;
    IF FOUND THEN
      granted = 1;
    ELSE
      -- Another owner got in between - report it as it is now.
      SELECT l.fence, l.holds, l.holder, l.expires_at INTO fence, holds, holder, v_expires
        FROM dblock_locks l WHERE l.name = p_name;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      granted = 0;
    END IF;
  END IF;
  expires_at = to_char(v_expires AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  expires_in_ms = CAST(floor(extract(epoch FROM (v_expires - now())) * 1000) AS bigint);
  RETURN NEXT;
END
$fn$;

-- Idempotency begin() / run_once() claim of (p_scope, p_key) with fingerprint p_fp for the
-- attempt owner p_owner, lease p_lease_ms, retention p_retention_ms. Columns and outcomes as
-- documented in sql/postgresql/idem_claim.sql.
-- The INSERT comes first because a new key is the common path: one INSERT, nothing else (a
-- concurrent uncommitted insert of the same key makes it wait for that transaction). Only on
-- a conflict is the row read; it is updated only when it may be taken over, and the UPDATE
-- re-checks that under the row lock.
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
  VALUES (p_scope, p_key, p_fp, 'in_progress', p_owner, 1,
          now() + p_lease_ms * interval '1 millisecond', NULL, NULL, NULL, now(), now(),
          now() + p_retention_ms * interval '1 millisecond')
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
