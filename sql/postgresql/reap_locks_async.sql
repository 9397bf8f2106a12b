-- Reaper batch without waiting for the WAL flush (reaper_options::async_commit):
-- reap_locks.sql plus set_config('synchronous_commit', 'off', true), which lasts until the
-- end of the current transaction - this statement's own implicit one, whose commit reads
-- the setting. Used only outside a caller's transaction. A crash can lose only deletions
-- of rows that had expired (they are reaped again); any later durable commit flushes this
-- one with it, WAL being sequential. Returns the number deleted.
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
SELECT COUNT(*), set_config('synchronous_commit', 'off', true) FROM gone
