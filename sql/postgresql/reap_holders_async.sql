-- Reaper: reap_holders.sql, committed without waiting for its WAL flush (the reaper's
-- async_commit; set_config(..., true) lasts for this implicit transaction only).
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
SELECT COUNT(*), set_config('synchronous_commit', 'off', true) FROM gone
