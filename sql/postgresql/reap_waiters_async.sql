-- Reaper batch of reap_waiters.sql without waiting for the WAL flush
-- (reaper_options::async_commit), as reap_locks_async.sql: set_config lasts until the end
-- of this statement's own implicit transaction. A crash can lose only deletions of expired
-- tickets (they are reaped again). Returns the number deleted.
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
SELECT COUNT(*), set_config('synchronous_commit', 'off', true) FROM gone
