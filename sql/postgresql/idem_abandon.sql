-- sql/postgresql/idem_abandon.sql — idempotency fail(terminal) when failures are not stored -
-- the owner of the current attempt deletes the record, so the key is free for a new request.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint. Fenced like idem_finish.
DELETE FROM dblock_idempotency
 WHERE scope = CAST($1 AS text) AND idem_key = CAST($2 AS text)
   AND owner = CAST($3 AS text) AND attempt = CAST($4 AS integer) AND fingerprint = CAST($5 AS text)
   AND status = 'in_progress' AND expires_at > now()
