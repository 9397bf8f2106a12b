-- Reaper: deletes up to $2 read-write lock and semaphore holds expired for longer than $1
-- ms (grace), oldest first. SKIP LOCKED leaves rows a grant or renewal is touching alone, and
-- the outer WHERE re-checks the expiry on the row's latest version, so a hold renewed in time
-- is never deleted. Returns the number deleted.
WITH victims AS (
  SELECT name, slot, owner FROM dblock_lock_holders
   WHERE expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
   ORDER BY expires_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM dblock_lock_holders h USING victims v
   WHERE h.name = v.name AND h.slot = v.slot AND h.owner = v.owner
     AND h.expires_at < now() - CAST($1 AS bigint) * interval '1 millisecond'
  RETURNING 1
)
SELECT COUNT(*) FROM gone
