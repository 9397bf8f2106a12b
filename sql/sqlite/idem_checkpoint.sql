-- sql/sqlite/idem_checkpoint.sql — idempotency checkpoint() and extend() - the owner of the
-- current attempt records a recovery point (NULL = keep the last one) and renews its lease.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 recovery point or NULL,
-- $7 lease in ms. A live attempt never outlives its record - expires_at is pushed to at
-- least the new lease end (the reaper spares live leases too). Fenced like idem_finish. Affected rows 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET recovery_point   = COALESCE($6, recovery_point),
       lease_expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $7,
       expires_at       = MAX(expires_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $7),
       updated_at       = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
