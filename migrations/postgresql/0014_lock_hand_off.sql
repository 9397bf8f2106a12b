-- dblock schema 0014 (PostgreSQL): a release hands a contended lease lock to the head of its
-- wait line in its own commit. Without it a contended name changes hands in two durable
-- commits (the holder's delete, then the waiter's own grant after it woke up); with it, in
-- one (the holder's release writes the waiter's grant), and the waiter only reads it.
--  - A ticket now carries the grant its waiter asked for (grant_ttl_ms: the lease plus the
--    lock delay, holder, lock_delay_ms); 0 in grant_ttl_ms marks a ticket nobody may be
--    handed a lease row for (read-write locks and semaphores share the line table).
--  - dblock_locks.ticket names the ticket a handed grant was made for: the waiter's try with
--    that ticket as its line bound is answered granted, read-only, and is not a re-entry
--    (holds stay as they are).
--  - dblock_lock_release_to_line(name, owner, fence): the final release that hands off.
ALTER TABLE dblock_locks ADD COLUMN IF NOT EXISTS ticket bigint;
ALTER TABLE dblock_lock_waiters ADD COLUMN IF NOT EXISTS grant_ttl_ms bigint NOT NULL DEFAULT 0;
ALTER TABLE dblock_lock_waiters ADD COLUMN IF NOT EXISTS holder varchar(255) NOT NULL DEFAULT '';
ALTER TABLE dblock_lock_waiters ADD COLUMN IF NOT EXISTS lock_delay_ms bigint NOT NULL DEFAULT 0;

-- dblock_lock_acquire as in migration 0007, plus: a live row of p_owner whose ticket is
-- p_line_bound was handed to this waiter by the previous holder's release. It is granted
-- as it is (granted 1, its fence and holds, read-only); the upsert, should the hand-off
-- come between the read and the upsert, keeps holds and fence of such a row.
CREATE OR REPLACE FUNCTION dblock_lock_acquire(p_name text, p_owner text, p_ttl_ms bigint, p_holder text,
  p_behind_line boolean DEFAULT false, p_lock_delay_ms bigint DEFAULT 0, p_line_bound bigint DEFAULT NULL,
  OUT granted integer, OUT fence bigint, OUT holds integer, OUT holder varchar,
  OUT expires_at text, OUT expires_in_ms bigint)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $fn$
#variable_conflict use_column
DECLARE
  v_owner varchar;
  v_expires timestamptz;
  v_ticket bigint;
BEGIN
  SELECT l.owner, l.fence, l.holds, l.holder, l.expires_at, l.ticket INTO v_owner, fence, holds, holder, v_expires, v_ticket
    FROM dblock_locks l WHERE l.name = p_name;
  IF FOUND AND v_owner = p_owner AND v_expires > now() AND v_ticket = p_line_bound THEN
    granted = 1;  -- handed to this waiter by the release: read-only
  ELSIF FOUND AND v_owner <> p_owner AND v_expires > now() THEN
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
    -- Free, expired or ours - the upsert (see migration 0007 for the grant lock and the
    -- fence of a row brought back by a failover).
    PERFORM pg_advisory_xact_lock(1684171883, hashtext(p_name));
    INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
    VALUES (p_name, p_owner, 1, dblock_next_fence(), now(),
            now() + p_ttl_ms * interval '1 millisecond', p_holder, p_lock_delay_ms)
    ON CONFLICT (name) DO UPDATE SET
      holds       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() AND l.ticket = p_line_bound THEN l.holds
                         WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
                         AND NOT (p_line_bound <> 0 AND l.fence < EXCLUDED.fence / 1099511627776 * 1099511627776) THEN l.holds + 1 ELSE 1 END,
      fence       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() AND l.ticket = p_line_bound THEN l.fence
                         WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
                         AND NOT (p_line_bound <> 0 AND l.fence < EXCLUDED.fence / 1099511627776 * 1099511627776) THEN l.fence ELSE EXCLUDED.fence END,
      acquired_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() AND l.ticket = p_line_bound THEN l.acquired_at
                         WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
                         AND NOT (p_line_bound <> 0 AND l.fence < EXCLUDED.fence / 1099511627776 * 1099511627776) THEN l.acquired_at ELSE now() END,
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

-- The final release of lease lock p_name by p_owner, grant p_fence, that hands the name to
-- the head of its wait line. Returns 0 when the row is no longer that grant (nothing
-- changed), 1 when it was deleted (nobody waits, or the head waits for a read-write lock or
-- semaphore), 2 when it was handed: the row becomes the head's grant - its owner, holds 1,
-- a new fence, expiry now() + the ticket's grant_ttl_ms, ticket = the head's ticket - and
-- the ticket is deleted, all in this transaction. Either way NOTIFY dblock_release wakes
-- the waiters (delivered only if the release commits).
-- Locks in the order every grant takes them: the name's grant lock (the fence is drawn under
-- it, so fences of one name keep increasing in grant order), then the row, then the
-- ticket. The head is the lowest live ticket; FOR UPDATE waits for a waiter deleting its
-- ticket at that moment (its wait ended) and then skips it, so a ticket is either handed a
-- grant or deleted by its waiter, never both.
CREATE OR REPLACE FUNCTION dblock_lock_release_to_line(p_name text, p_owner text, p_fence bigint)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  w record;
BEGIN
  PERFORM pg_advisory_xact_lock(1684171883, hashtext(p_name));
  PERFORM 1 FROM dblock_locks l WHERE l.name = p_name AND l.owner = p_owner AND l.fence = p_fence FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  SELECT q.ticket, q.owner, q.grant_ttl_ms, q.holder, q.lock_delay_ms INTO w
    FROM dblock_lock_waiters q
   WHERE q.name = p_name AND q.expires_at > now()
   ORDER BY q.ticket LIMIT 1 FOR UPDATE;
  IF FOUND AND w.grant_ttl_ms > 0 THEN
    DELETE FROM dblock_lock_waiters q WHERE q.ticket = w.ticket;
    UPDATE dblock_locks l
       SET owner = w.owner, holds = 1, fence = dblock_next_fence(), acquired_at = now(),
           expires_at = now() + w.grant_ttl_ms * interval '1 millisecond', holder = w.holder,
           lock_delay_ms = w.lock_delay_ms, ticket = w.ticket
     WHERE l.name = p_name;
    PERFORM pg_notify('dblock_release', p_name);
    RETURN 2;
  END IF;
  DELETE FROM dblock_locks l WHERE l.name = p_name;
  PERFORM pg_notify('dblock_release', p_name);
  RETURN 1;
END
$fn$;
