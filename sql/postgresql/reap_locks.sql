-- Reaper: deletes up to $2 lock rows expired for longer than $1 ms (the grace period),
-- oldest first. SKIP LOCKED leaves rows another transaction is touching (a takeover or
-- a renewal) alone, and the outer WHERE re-checks the expiry on the row's latest
-- version, so a row renewed in time is never deleted. Returns the number deleted.
WITH victims AS (
  SELECT name FROM dblock_locks
   WHERE expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
   ORDER BY expires_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM dblock_locks l USING victims v
   WHERE l.name = v.name AND l.expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
  RETURNING 1
)
SELECT COUNT(*) FROM gone
