-- sql/sqlite/idem_finish.sql — idempotency complete(), and fail(terminal) when failures are
-- stored - the owner of the current attempt records the outcome, to be replayed.
-- $1 scope, $2 key, $3 owner, $4 attempt, $5 fingerprint, $6 status (completed or failed),
-- $7 response code, $8 response body as lower-case hex, $9 retention in ms (counted again
-- from now). SQLite 3.40 has no unhex() and a bound parameter cannot become a blob literal,
-- so the body is stored as its hex TEXT in response_body (the BLOB column has no affinity
-- and keeps the text exactly). dblock decodes it; byte-exact, at twice the size.
-- Fenced by owner AND attempt AND fingerprint, so a stale worker whose attempt was taken over
-- matches no row and changes nothing. Affected rows 1 = recorded, 0 = not the owner.
UPDATE dblock_idempotency
   SET status           = $6,
       lease_expires_at = NULL,
       response_code    = $7,
       response_body    = $8,
       updated_at       = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       expires_at       = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $9
 WHERE scope = $1 AND idem_key = $2 AND owner = $3 AND attempt = $4 AND fingerprint = $5
   AND status = 'in_progress' AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
