-- sql/mysql/idem_reopen.sql — idempotency fail(retryable) - the owner of the current attempt
-- gives the key back. The record stays in_progress with no owner and no lease, so the next
-- claim takes it over at once as attempt N+1 and learns the recovery point.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint. Fenced like idem_finish.
UPDATE dblock_idempotency
   SET owner = NULL, lease_expires_at = NULL, updated_at = UTC_TIMESTAMP(6)
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > UTC_TIMESTAMP(6)
