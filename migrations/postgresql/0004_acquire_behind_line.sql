-- dblock schema 0004 (PostgreSQL): dblock_lock_acquire gains p_behind_line (default false,
-- so a 4-argument call is unchanged). With true - sql/postgresql/lock_acquire_queued.sql,
-- the first try of a waiting acquire() - a free or expired name is not granted while a
-- waiter heads its wait line (session_options::fair, lock_line_enter.sql): that try
-- queues instead of barging ahead of the line. The test is a shared try of the line's
-- advisory key, held to the commit: the lock manager only, no WAL. A live row of another
-- owner and re-entry behave as before. The body is otherwise 0003's (a migration is a
-- record of its step: 0003 stays as it was applied). Replaced in one transaction (the
-- migration's), so concurrent callers see the old or the new function, never none.
DROP FUNCTION IF EXISTS dblock_lock_acquire(text, text, bigint, text);

-- Acquire or re-enter lease lock p_name for p_owner with a TTL of p_ttl_ms ms.
-- One row: granted 1 (fresh grant or takeover of an expired row with a new fence from
-- dblock_fence_seq, drawn under the name's grant lock (below), or re-entry by the same live owner with holds + 1 and the same fence)
-- or granted 0 (a live row of another owner, as read). No row only when the upsert lost a
-- race and the row was gone again when read back. A refused try runs only the first SELECT:
-- no tuple locked, no transaction id, no WAL. Expiry is judged by the server's now() only.
CREATE FUNCTION dblock_lock_acquire(p_name text, p_owner text, p_ttl_ms bigint, p_holder text,
  p_behind_line boolean DEFAULT false,
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
  ELSIF p_behind_line AND NOT (FOUND AND v_owner = p_owner)
        AND NOT pg_try_advisory_xact_lock_shared(1684171889, hashtext(p_name)) THEN
    -- Free or expired, but a waiter heads the name's wait line (lock_line_enter.sql holds
    -- that key): the first try of a waiting acquire queues behind it instead of taking the
    -- lock in the moment before the head's try. Read-only; re-entry is never refused.
    IF NOT FOUND THEN
      RETURN;
    END IF;
    granted = 0;
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
