-- dblock schema 0005 (PostgreSQL): lock delay. A lease that ran out unreleased can be taken
-- over only the holder's lock delay after its end (session_options::lock_delay): the holder
-- asks the server to keep its row for TTL + lock delay, and stores the delay in the new
-- column lock_delay_ms so that `dblock locks` can tell the lease's end (expires_at -
-- lock_delay_ms) from the moment of takeover (expires_at). Existing rows get 0 (no delay).
-- dblock_lock_acquire gains p_lock_delay_ms (default 0, so a 5-argument call is unchanged);
-- the body is otherwise 0004's. Replaced in one transaction (the migration's), so concurrent
-- callers see the old or the new function, never none.
ALTER TABLE dblock_locks ADD COLUMN IF NOT EXISTS lock_delay_ms bigint NOT NULL DEFAULT 0
  CHECK (lock_delay_ms >= 0);

DROP FUNCTION IF EXISTS dblock_lock_acquire(text, text, bigint, text, boolean);

CREATE FUNCTION dblock_lock_acquire(p_name text, p_owner text, p_ttl_ms bigint, p_holder text,
  p_behind_line boolean DEFAULT false, p_lock_delay_ms bigint DEFAULT 0,
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
    INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
    VALUES (p_name, p_owner, 1, nextval('dblock_fence_seq'), now(),
            now() + p_ttl_ms * interval '1 millisecond', p_holder, p_lock_delay_ms)
    ON CONFLICT (name) DO UPDATE SET
      holds       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.holds + 1 ELSE 1 END,
      fence       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.fence ELSE EXCLUDED.fence END,
      acquired_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.acquired_at ELSE now() END,
      owner       = EXCLUDED.owner,
      expires_at  = EXCLUDED.expires_at,
      holder      = EXCLUDED.holder,
      lock_delay_ms = EXCLUDED.lock_delay_ms
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
