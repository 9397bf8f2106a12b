-- dblock schema 0006 (PostgreSQL): the wait line lives in a table. A waiting acquire()
-- refused once takes a ticket: a row of dblock_lock_waiters (name, ticket from the identity
-- sequence, owner, expiry) renewed by the session's one-statement renewal like its leases.
-- A free or expired name is granted only to the try whose line bound is at most the lowest
-- live ticket of the name: the lowest ticket's own try (bound = its ticket), a try of a name
-- nobody waits for, or a live re-entry. A waiter that stops running stops renewing, and its
-- ticket stops counting at its expiry. No connection is held per waiter, so the line works
-- the same behind a transaction pooler.
-- dblock_lock_acquire gains p_line_bound (default NULL = every live ticket blocks a grant);
-- p_behind_line is kept for callers of the 0004/0005 signature and no longer read. With a
-- ticket as bound, a grant deletes that ticket in the same transaction. Replaced in one
-- transaction (the migration's), so concurrent callers see the old or the new function.
CREATE TABLE IF NOT EXISTS dblock_lock_waiters (
  ticket     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       text        NOT NULL CHECK (octet_length(name) BETWEEN 1 AND 255),
  owner      varchar(32) NOT NULL,
  expires_at timestamptz NOT NULL
);
-- The grant check reads a name's lowest tickets; the renewal finds an owner's.
CREATE INDEX IF NOT EXISTS dblock_lock_waiters_name ON dblock_lock_waiters (name, ticket);
CREATE INDEX IF NOT EXISTS dblock_lock_waiters_owner ON dblock_lock_waiters (owner);

DROP FUNCTION IF EXISTS dblock_lock_acquire(text, text, bigint, text, boolean, bigint);

-- Acquire or re-enter lease lock p_name for p_owner (TTL p_ttl_ms, lock delay
-- p_lock_delay_ms already included in it). One row: granted 1 (fresh grant or takeover of an
-- expired row with a new fence drawn under the name's grant lock, or live re-entry with
-- holds + 1 and the same fence) or granted 0 (a live row of another owner, or an expired row
-- while an earlier waiter is in line). No row when the name has no row and an earlier waiter
-- is in line, or the upsert lost a race and the row was gone again when read back. A refused
-- try writes nothing. Expiry is judged by the server's now() only.
CREATE FUNCTION dblock_lock_acquire(p_name text, p_owner text, p_ttl_ms bigint, p_holder text,
  p_behind_line boolean DEFAULT false, p_lock_delay_ms bigint DEFAULT 0, p_line_bound bigint DEFAULT NULL,
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
  ELSIF NOT (FOUND AND v_owner = p_owner AND v_expires > now())
        AND EXISTS (SELECT 1 FROM dblock_lock_waiters w
                     WHERE w.name = p_name AND w.expires_at > now()
                       AND (p_line_bound IS NULL OR w.ticket < p_line_bound)) THEN
    -- Free or expired, but an earlier waiter is in line: its turn. Read-only.
    IF NOT FOUND THEN
      RETURN;
    END IF;
    granted = 0;
  ELSE
    -- Free, expired or ours - the upsert. Its WHERE re-checks the newest row version under
    -- the row lock, so a holder that committed after the read above still wins.
    -- Grants of one name draw their fences one at a time: this transaction-scoped advisory
    -- lock (the two-int key space, class 'dblk' = 1684171883) is held from before nextval
    -- until the commit, so a value drawn in VALUES cannot be overtaken by another owner's
    -- whole grant and release. No WAL, no flush. hashtext collisions merely make two names'
    -- grants take turns.
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
      IF p_line_bound IS NOT NULL THEN
        DELETE FROM dblock_lock_waiters w WHERE w.ticket = p_line_bound AND w.owner = p_owner;
      END IF;
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
