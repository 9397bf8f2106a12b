-- dblock schema 0015 (PostgreSQL): a hand-off's release notice says whom the lock was handed
-- to. dblock_lock_release_to_line (migration 0014) as before, except that a release that
-- hands the name to the head of its line NOTIFYs dblock_release with the payload
--   name US owner US ticket US fence   (US: the unit separator, chr(31))
-- naming the head's owner token, its ticket and the new grant's fence. The head's process
-- hears it on its listening connection and holds the lock without reading its grant; any
-- other listener reads the name in front (a payload without three separators followed by
-- two numbers is a plain name, as every other release's). Sent in the release's own
-- transaction: delivered only once it has committed, after its WAL flush.
CREATE OR REPLACE FUNCTION dblock_lock_release_to_line(p_name text, p_owner text, p_fence bigint)
RETURNS integer
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  w record;
  v_fence bigint;
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
     WHERE l.name = p_name
    RETURNING l.fence INTO v_fence;
    PERFORM pg_notify('dblock_release', p_name || chr(31) || w.owner || chr(31) || w.ticket || chr(31) || v_fence);
    RETURN 2;
  END IF;
  DELETE FROM dblock_locks l WHERE l.name = p_name;
  PERFORM pg_notify('dblock_release', p_name);
  RETURN 1;
END
$fn$;
