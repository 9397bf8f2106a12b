-- sql/postgresql/idem_checkpoint.sql — idempotency checkpoint() and extend() - the owner of
-- the current attempt records a recovery point (NULL = keep the last one) and renews its lease.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 recovery point or NULL,
-- $7 lease in ms. A live attempt never outlives its record - expires_at is pushed to at
-- least the new lease end (the reaper spares live leases too). Fenced like idem_finish. Affected rows 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET recovery_point   = COALESCE(CAST($6 AS text), recovery_point),
       lease_expires_at = now() + CAST($7 AS bigint) * interval '1 millisecond',
       expires_at       = GREATEST(expires_at, now() + CAST($7 AS bigint) * interval '1 millisecond'),
       updated_at       = now()
 WHERE scope = CAST($1 AS text) AND idem_key = CAST($2 AS text)
   AND owner = CAST($3 AS text) AND attempt = CAST($4 AS integer) AND fingerprint = CAST($5 AS text)
   AND status = 'in_progress' AND expires_at > now()
