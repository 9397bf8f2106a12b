-- Reaper: deletes up to $2 wait-line tickets expired for longer than $1 ms (grace), oldest
-- ticket first. An expired ticket already stopped counting for grants (lock_acquire reads
-- only live tickets); this keeps the table small. SKIP LOCKED leaves a ticket a renewal is
-- touching alone, and the outer WHERE re-checks the expiry on its latest version, so a
-- ticket renewed in time is never deleted. Returns the number deleted.
WITH victims AS (
  SELECT ticket FROM dblock_lock_waiters
   WHERE expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
   ORDER BY ticket
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM dblock_lock_waiters w USING victims v
   WHERE w.ticket = v.ticket AND w.expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
  RETURNING 1
)
SELECT COUNT(*) FROM gone
