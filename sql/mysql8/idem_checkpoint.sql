-- sql/mysql/idem_checkpoint.sql — idempotency checkpoint() and extend() - the owner of the
-- current attempt records a recovery point (NULL = keep the last one) and renews its lease.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 recovery point or NULL,
-- $7 lease in ms. A live attempt never outlives its record - expires_at is pushed to at
-- least the new lease end (the reaper spares live leases too). Fenced like idem_finish. Matched rows 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET recovery_point   = COALESCE($6, recovery_point),
       lease_expires_at = UTC_TIMESTAMP(6) + INTERVAL ($7 * 1000) MICROSECOND,
       expires_at       = GREATEST(expires_at, UTC_TIMESTAMP(6) + INTERVAL ($7 * 1000) MICROSECOND),
       updated_at       = UTC_TIMESTAMP(6)
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > UTC_TIMESTAMP(6)
