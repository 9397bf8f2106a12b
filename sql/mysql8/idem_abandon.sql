-- sql/mysql/idem_abandon.sql — idempotency fail(terminal) when failures are not stored - the
-- owner of the current attempt deletes the record, so the key is free for a new request.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint. Fenced like idem_finish.
DELETE FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > UTC_TIMESTAMP(6)
