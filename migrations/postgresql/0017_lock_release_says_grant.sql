-- dblock schema 0017 (PostgreSQL): a release that hands a lease lock to the head of its wait
-- line answers with the grant it made, so that the releasing process can pass it to a waiter
-- of its own (a thread of the same process) without that waiter reading it.
-- dblock_lock_release_to_line_grant is dblock_lock_release_to_line of migration 0015 (same
-- locks in the same order: the name's grant lock, the row, the head ticket; the same NOTIFY)
-- with four answers: outcome (0 = the row was no longer this grant, nothing changed;
-- 1 = deleted; 2 = handed) and, when handed, the head's owner token, its ticket and the new
-- grant's fence. dblock_lock_release_to_line (migration 0015) stays as it is for libraries that
-- still call it.
CREATE OR REPLACE FUNCTION dblock_lock_release_to_line_grant(p_name text, p_owner text, p_fence bigint,
  OUT outcome integer, OUT next_owner text, OUT next_ticket bigint, OUT next_fence bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  w record;
BEGIN
  outcome := 0;
  PERFORM pg_advisory_xact_lock(1684171883, hashtext(p_name));
  PERFORM 1 FROM dblock_locks l WHERE l.name = p_name AND l.owner = p_owner AND l.fence = p_fence FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
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
     WHERE l.name = p_name
    RETURNING l.fence INTO next_fence;
    PERFORM pg_notify('dblock_release', p_name || chr(31) || w.owner || chr(31) || w.ticket || chr(31) || next_fence);
    outcome := 2;
    next_owner := w.owner;
    next_ticket := w.ticket;
    RETURN;
  END IF;
  DELETE FROM dblock_locks l WHERE l.name = p_name;
  PERFORM pg_notify('dblock_release', p_name);
  outcome := 1;
END
$fn$;
