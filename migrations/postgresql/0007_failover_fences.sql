-- dblock schema 0007 (PostgreSQL): fences that stay increasing across a failover.
-- A fence is timeline * 2^40 + a value of dblock_fence_seq. The timeline ID is the server's
-- WAL timeline: it goes up by one on every promotion of a standby (and on every point-in-time
-- recovery), so the first grant of a promoted server is above every fence the old primary
-- handed out, even grants the standby never received (asynchronous replication) and
-- whose sequence values it will draw again. Fences from before this migration are bare
-- sequence values, below 2^40: still below every new one.
-- The timeline is read from the name of the WAL file being written (its first 8 hex digits):
-- pg_walfile_name(pg_current_wal_lsn()) is callable by every role, costs no I/O, and on a
-- promoted server names the new timeline from the first write on. pg_control_checkpoint()
-- names it only after the next checkpoint, which a promotion merely requests.
-- Both functions refuse to run during recovery, as a grant on a standby must fail anyway.
-- The sequence is capped below 2^40 so that it can never reach into the next timeline's
-- range: at its end a grant fails (nextval's error) instead of handing out a fence that a
-- later promotion would repeat. 2^40 is about 10^12 grants per timeline.
ALTER SEQUENCE dblock_fence_seq MAXVALUE 1099511627775;

-- The next fence. A plain SQL function: the planner inlines its expression into the
-- statement that calls it, so it costs no PL/pgSQL call and evaluates where nextval did
-- (after the name's grant lock, see sql/postgresql/lock_acquire.sql).
CREATE OR REPLACE FUNCTION dblock_next_fence() RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
  SELECT CAST(CAST('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS bit(32)) AS bigint)
         * 1099511627776 + nextval('dblock_fence_seq')
$fn$;

DROP FUNCTION IF EXISTS dblock_lock_acquire(text, text, bigint, text, boolean, bigint, bigint);

-- dblock_lock_acquire draws its fences from dblock_next_fence(). A live row of the same owner
-- is re-entered (holds + 1, same fence), except when the try says it does not hold
-- the name (p_line_bound other than 0 and NULL) and the row's fence is from an earlier
-- timeline: that row is an older grant of its own brought back by a failover that lost the
-- newer ones, and is granted afresh (holds 1, a new fence above every fence handed out).

-- Acquire or re-enter lease lock p_name for p_owner (TTL p_ttl_ms, lock delay
-- p_lock_delay_ms already included in it). One row: granted 1 (fresh grant or takeover of an
-- expired row with a new fence (dblock_next_fence) drawn under the name's grant lock, or live re-entry with
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
    -- lock (the two-int key space, class 'dblk' = 1684171883) is held from before the fence is drawn
    -- until the commit, so a fence drawn in VALUES cannot be overtaken by another owner's
    -- whole grant and release. No WAL, no flush. hashtext collisions merely make two names'
    -- grants take turns.
    PERFORM pg_advisory_xact_lock(1684171883, hashtext(p_name));
    INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
    VALUES (p_name, p_owner, 1, dblock_next_fence(), now(),
            now() + p_ttl_ms * interval '1 millisecond', p_holder, p_lock_delay_ms)
    ON CONFLICT (name) DO UPDATE SET
      holds       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
                         AND NOT (p_line_bound <> 0 AND l.fence < EXCLUDED.fence / 1099511627776 * 1099511627776) THEN l.holds + 1 ELSE 1 END,
      fence       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
                         AND NOT (p_line_bound <> 0 AND l.fence < EXCLUDED.fence / 1099511627776 * 1099511627776) THEN l.fence ELSE EXCLUDED.fence END,
      acquired_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now()
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
