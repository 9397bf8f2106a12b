-- Reaper: deletes up to $1 idempotency records past their retention (expires_at),
-- oldest first, except an in-progress attempt whose lease is still live. Same
-- SKIP LOCKED + re-check pattern as reap_locks. Returns the number deleted.
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
SELECT COUNT(*) FROM gone
