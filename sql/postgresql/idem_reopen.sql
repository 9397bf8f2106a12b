-- sql/postgresql/idem_reopen.sql — idempotency fail(retryable) - the owner of the current
-- attempt gives the key back. The record stays in_progress with no owner and no lease, so
-- the next claim takes it over at once as attempt N+1 and learns the recovery point.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint. Fenced like idem_finish.
UPDATE dblock_idempotency
   SET owner = NULL, lease_expires_at = NULL, updated_at = now()
 WHERE scope = CAST($1 AS text) AND idem_key = CAST($2 AS text)
   AND owner = CAST($3 AS text) AND attempt = CAST($4 AS integer) AND fingerprint = CAST($5 AS text)
   AND status = 'in_progress' AND expires_at > now()
