-- sql/sqlite/idem_peek.sql — idempotency begin() and run_once(), SQLite: the read sent
-- before idem_claim.sql. $1 scope, $2 key, $3 fingerprint. The live record (not past its
-- retention), if any, in the fewest columns the client needs to judge it
-- (lib/dialects/sqlite/idempotency.cpp):
--   same_fingerprint (1/0), status, attempt, recovery_point, response_code,
--   response_body (hex), lease_left_ms (in_progress only; NULL without a lease)
-- The client answers from this row every outcome that changes nothing: a replay of a
-- finished record, a fingerprint mismatch, an attempt in progress under a live lease
-- (retry after lease_left_ms). A new key (no row), or an in-progress record of the same
-- fingerprint whose lease ran out (lease_left_ms <= 0) or was reopened (NULL), is claimed by
-- idem_claim.sql, which writes. So a replay takes no write lock and writes nothing (the
-- claim's upsert writes the row back even unchanged). A record that changes between this
-- read and the claim is the claim's case.
SELECT fingerprint = $3 AS same_fingerprint,
       status,
       attempt,
       recovery_point,
       response_code,
       CAST(response_body AS TEXT) AS response_body,
       CASE WHEN status = 'in_progress'
            THEN lease_expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
       END AS lease_left_ms
  FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
