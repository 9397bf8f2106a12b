-- Reaper batch without waiting for the WAL flush (reaper_options::async_commit):
-- reap_idempotency.sql plus set_config('synchronous_commit', 'off', true), local to this
-- statement's own implicit transaction, as reap_locks_async.sql. A crash can lose only
-- deletions of records past their retention (they are reaped again). Returns the number
-- deleted.
WITH victims AS (
  SELECT scope, idem_key FROM dblock_idempotency
   WHERE expires_at < now()
     AND (status <> 'in_progress' OR lease_expires_at IS NULL OR lease_expires_at < now())
   ORDER BY expires_at
   LIMIT $1
   FOR UPDATE SKIP LOCKED
), gone AS (
  DELETE FROM dblock_idempotency i USING victims v
   WHERE i.scope = v.scope AND i.idem_key = v.idem_key AND i.expires_at < now()
     AND (i.status <> 'in_progress' OR i.lease_expires_at IS NULL OR i.lease_expires_at < now())
  RETURNING 1
)
SELECT COUNT(*), set_config('synchronous_commit', 'off', true) FROM gone
