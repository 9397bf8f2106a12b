-- sql/postgresql/idem_finish.sql — idempotency complete(), and fail(terminal) when failures
-- are stored - the owner of the current attempt records the outcome, to be replayed.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 status (completed | failed),
-- $7 response code, $8 response body as hex (decoded here, stored byte-exact in bytea),
-- $9 retention in ms (counted again from now).
-- Fenced by owner AND attempt AND fingerprint, so a stale worker whose attempt was taken over
-- matches no row and changes nothing. Affected rows 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET status           = CAST($6 AS text),
       lease_expires_at = NULL,
       response_code    = CAST($7 AS integer),
       response_body    = decode(CAST($8 AS text), 'hex'),
       updated_at       = now(),
       expires_at       = now() + CAST($9 AS bigint) * interval '1 millisecond'
 WHERE scope = CAST($1 AS text) AND idem_key = CAST($2 AS text)
   AND owner = CAST($3 AS text) AND attempt = CAST($4 AS integer) AND fingerprint = CAST($5 AS text)
   AND status = 'in_progress' AND expires_at > now()
