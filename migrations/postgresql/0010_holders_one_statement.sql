-- dblock schema 0010 (PostgreSQL): the grant of a read-write lock and of semaphore permits
-- as PL/pgSQL functions, so that an acquire is one statement, one round trip
-- (sql/postgresql/holders_acquire_rw.sql and holders_acquire_permits.sql call them). They run
-- the steps of the grant transaction lib/core/holders.cpp sends where a statement costs
-- nothing on the network (SQLite, lib/core/multi_lock.cpp): the name's grant lock
-- (holders_gate.sql), the takeover of expired holds (holders_clear.sql), the read of the
-- live ones, the wait line (holders_line_ahead.sql), the waiter's ticket, the fences
-- (dblock_next_fence(), migration 0007) and the rows; the same decisions, in the same order.
-- Each statement of a function runs with a fresh snapshot (READ COMMITTED, VOLATILE), so
-- everything read after the grant lock sees every grant committed before it.
-- The answer is one text, the same on every dialect (parsed in
-- lib/dialects/common/families.cpp), its fields separated by single spaces:
--   'G fence'                     a fresh read-write hold
--   'R fence'                     a re-entry (the hold's fence) or an upgrade (a new fence)
--   'G slot fence slot fence ...' permits, lowest free slots first
--   'B fence holds expires_in_ms lock_delay_ms expires_at holder'
--                                 refused: the soonest-ending live hold in the way
--   'B'                           refused; the holds in the way were released after the read
--   'L'                           refused: an earlier waiter of the wait line goes first
--   'K permits'                   a read-write lock asked of a semaphore of that many permits
--   'K'                           a semaphore asked of a read-write lock
--   'P permits'                   a semaphore asked with another permit count than its holders'
--   'U others'                    an upgrade refused: that many other readers hold it
-- No EXCEPTION blocks (each would start a subtransaction), no colons outside string literals
-- (SOCI scans statement text for :name placeholders). CREATE OR REPLACE under the migration
-- lock.

-- The soonest-ending live hold of name p_name in the way of owner p_owner (p_writers_only:
-- only write holds count), in the refusal's format; NULL when none is.
CREATE OR REPLACE FUNCTION dblock_holders_blocker(p_name text, p_owner text, p_writers_only integer)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v text;
BEGIN
  SELECT 'B ' || h.fence || ' ' || h.holds || ' ' ||
         CAST(floor(extract(epoch FROM (h.expires_at - now())) * 1000) AS bigint) || ' ' || h.lock_delay_ms || ' ' ||
         to_char(h.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || ' ' || h.holder
    INTO v
    FROM dblock_lock_holders h
   WHERE h.name = p_name AND h.owner <> p_owner AND h.expires_at > now()
     AND (p_writers_only = 0 OR h.write_holds > 0)
   ORDER BY h.expires_at, h.slot, h.fence
   LIMIT 1;
  RETURN v;
END
$fn$;

-- A read-write hold of p_name for p_owner: p_write 1 for a write hold; p_fence the fence of
-- the session's own live hold of the name (0 without one: a row of the owner with another
-- fence is an earlier hold the session no longer counts on, replaced); p_ticket the waiter's
-- ticket (0 without one), deleted with the grant; p_bound the wait-line bound
-- (holders_line_ahead.sql); p_row_ttl_ms the lease plus the lock delay; p_holder the holder
-- text; p_delay_ms the lock delay.
CREATE OR REPLACE FUNCTION dblock_holders_acquire_rw(p_name text, p_owner text, p_write integer, p_fence bigint,
  p_ticket bigint, p_bound bigint, p_row_ttl_ms bigint, p_holder text, p_delay_ms bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_kinds bigint;
  v_permits integer;
  v_own bigint;
  v_own_fence bigint;
  v_own_writes integer;
  v_others bigint;
  v_writers bigint;
  v_fence bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(1684171884, hashtext(p_name));
  DELETE FROM dblock_lock_holders WHERE name = p_name AND expires_at <= now();
  -- The live holds, in one read: another kind, the session's own row, the others.
  SELECT count(*) FILTER (WHERE h.kind <> 'r'), min(h.permits) FILTER (WHERE h.kind <> 'r'),
         count(*) FILTER (WHERE h.owner = p_owner AND h.slot = 0),
         max(h.fence) FILTER (WHERE h.owner = p_owner AND h.slot = 0),
         max(h.write_holds) FILTER (WHERE h.owner = p_owner AND h.slot = 0),
         count(*) FILTER (WHERE h.owner <> p_owner),
         count(*) FILTER (WHERE h.owner <> p_owner AND h.write_holds > 0)
    INTO v_kinds, v_permits, v_own, v_own_fence, v_own_writes, v_others, v_writers
    FROM dblock_lock_holders h
   WHERE h.name = p_name AND h.expires_at > now();
  IF v_kinds > 0 THEN
    RETURN 'K ' || v_permits;
  END IF;
  IF v_own > 0 AND v_own_fence = p_fence THEN
    IF p_write = 0 OR v_own_writes > 0 THEN
      v_fence = v_own_fence;  -- re-entry: the same fence
    ELSIF v_others > 0 THEN
      RETURN 'U ' || v_others;
    ELSE
      v_fence = dblock_next_fence();  -- the only reader upgrades: a new, larger fence
    END IF;
    UPDATE dblock_lock_holders
       SET holds = holds + 1, write_holds = write_holds + p_write, fence = v_fence,
           expires_at = now() + p_row_ttl_ms * interval '1 millisecond'
     WHERE name = p_name AND owner = p_owner AND slot = 0 AND expires_at > now();
    IF NOT FOUND THEN
      RAISE EXCEPTION 'read-write lock %: the live row vanished inside its gate', p_name;
    END IF;
    RETURN 'R ' || v_fence;
  END IF;
  IF v_own > 0 THEN  -- a row of an earlier hold the session no longer counts on: replaced
    DELETE FROM dblock_lock_holders WHERE name = p_name AND owner = p_owner AND slot = 0 AND fence = v_own_fence;
    PERFORM pg_notify('dblock_release', p_name);
  END IF;
  IF (p_write = 1 AND v_others > 0) OR (p_write = 0 AND v_writers > 0) THEN
    -- 'B' alone: a release (it takes no gate) ended the holds in the way after the read.
    RETURN COALESCE(dblock_holders_blocker(p_name, p_owner, 1 - p_write), 'B');
  END IF;
  IF EXISTS (SELECT 1 FROM dblock_lock_waiters w
              WHERE w.name = p_name AND w.ticket < p_bound AND w.expires_at > now()) THEN
    RETURN 'L';
  END IF;
  IF p_ticket <> 0 THEN
    DELETE FROM dblock_lock_waiters WHERE ticket = p_ticket AND owner = p_owner;
  END IF;
  v_fence = dblock_next_fence();
  INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                   expires_at, holder, lock_delay_ms)
  VALUES (p_name, p_owner, 0, 'r', 1, p_write, 0, v_fence, now(),
          now() + p_row_ttl_ms * interval '1 millisecond', p_holder, p_delay_ms);
  RETURN 'G ' || v_fence;
END
$fn$;

-- p_count permits of semaphore p_name of p_permits permits for p_owner, into the lowest free
-- slots, each with its own fence; the other parameters as dblock_holders_acquire_rw's.
CREATE OR REPLACE FUNCTION dblock_holders_acquire_permits(p_name text, p_owner text, p_permits integer,
  p_count integer, p_ticket bigint, p_bound bigint, p_row_ttl_ms bigint, p_holder text, p_delay_ms bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_kinds bigint;
  v_permits integer;
  v_taken bigint;
  v_slot integer;
  v_got integer;
  v_fence bigint;
  v_out text;
BEGIN
  PERFORM pg_advisory_xact_lock(1684171884, hashtext(p_name));
  DELETE FROM dblock_lock_holders WHERE name = p_name AND expires_at <= now();
  -- The live holds, in one read: another kind, another permit count, the slots taken.
  SELECT count(*) FILTER (WHERE h.kind <> 's'), min(h.permits) FILTER (WHERE h.permits <> p_permits),
         count(DISTINCT h.slot)
    INTO v_kinds, v_permits, v_taken
    FROM dblock_lock_holders h
   WHERE h.name = p_name AND h.expires_at > now();
  IF v_kinds > 0 THEN
    RETURN 'K';
  END IF;
  IF v_permits IS NOT NULL THEN
    RETURN 'P ' || v_permits;
  END IF;
  IF v_taken + p_count > p_permits THEN
    -- 'B' alone: a release (it takes no gate) ended every counted hold in between.
    RETURN COALESCE(dblock_holders_blocker(p_name, '', 0), 'B');
  END IF;
  IF EXISTS (SELECT 1 FROM dblock_lock_waiters w
              WHERE w.name = p_name AND w.ticket < p_bound AND w.expires_at > now()) THEN
    RETURN 'L';
  END IF;
  IF p_ticket <> 0 THEN
    DELETE FROM dblock_lock_waiters WHERE ticket = p_ticket AND owner = p_owner;
  END IF;
  v_out = 'G';
  v_slot = 1;
  v_got = 0;
  WHILE v_got < p_count LOOP
    IF EXISTS (SELECT 1 FROM dblock_lock_holders h WHERE h.name = p_name AND h.slot = v_slot) THEN
      -- Taken: the lowest free slot from v_slot on, in one statement (one snapshot). Rows only
      -- go away meanwhile (releases; a new grant needs the gate), so it is free now and at
      -- most p_permits.
      SELECT min(c.s) INTO v_slot
        FROM (SELECT v_slot AS s
              UNION ALL
              SELECT h.slot + 1 FROM dblock_lock_holders h WHERE h.name = p_name AND h.slot >= v_slot) c
       WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_holders n WHERE n.name = p_name AND n.slot = c.s);
    END IF;
    IF v_slot > p_permits THEN
      RAISE EXCEPTION 'semaphore % has no free slot left for its grant', p_name;
    END IF;
    v_fence = dblock_next_fence();
    INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                     expires_at, holder, lock_delay_ms)
    VALUES (p_name, p_owner, v_slot, 's', 1, 0, p_permits, v_fence, now(),
            now() + p_row_ttl_ms * interval '1 millisecond', p_holder, p_delay_ms);
    v_out = v_out || ' ' || v_slot || ' ' || v_fence;
    v_got = v_got + 1;
    v_slot = v_slot + 1;
  END LOOP;
  RETURN v_out;
END
$fn$;
