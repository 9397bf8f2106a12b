-- sql/mysql/idem_finish.sql — idempotency complete(), and fail(terminal) when failures are
-- stored - the owner of the current attempt records the outcome, to be replayed.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 status (completed or failed),
-- $7 response code, $8 response body as hex (UNHEX here, stored byte-exact in LONGBLOB),
-- $9 retention in ms (counted again from now).
-- Fenced by owner AND attempt AND fingerprint, so a stale worker whose attempt was taken over
-- matches no row and changes nothing. Matched rows (CLIENT_FOUND_ROWS) 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET status           = $6,
       lease_expires_at = NULL,
       response_code    = $7,
       response_body    = UNHEX($8),
       updated_at       = UTC_TIMESTAMP(6),
       expires_at       = UTC_TIMESTAMP(6) + INTERVAL ($9 * 1000) MICROSECOND
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > UTC_TIMESTAMP(6)
