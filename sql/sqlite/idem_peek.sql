-- sql/sqlite/idem_peek.sql — idempotency begin() and run_once(), SQLite: the read sent
-- before idem_claim.sql. $1 scope, $2 key, $3 fingerprint. Returns the claim's row, in
-- idem_claim.sql's columns, for every outcome that changes nothing: a replay of a finished
-- record, a fingerprint mismatch, an attempt in progress under a live lease. No row for a new
-- key, a record past its retention, or an in-progress record of the same fingerprint whose
-- lease ran out (or was reopened): those are claimed by idem_claim.sql, which writes. So a
-- replay takes no write lock and writes nothing (the claim's upsert writes the row back even
-- unchanged). A record that changes between this read and the claim is the claim's case.
--   outcome, status, attempt, recovery_point, response_code, response_body (hex), retry_after_ms
SELECT CASE WHEN fingerprint <> $3 THEN 'mismatch'
            WHEN status = 'in_progress' THEN 'in_progress'
            ELSE 'replay' END AS outcome,
       status,
       attempt,
       recovery_point,
       CASE WHEN fingerprint = $3 AND status <> 'in_progress' THEN response_code END AS response_code,
       CASE WHEN fingerprint = $3 AND status <> 'in_progress' THEN CAST(response_body AS TEXT) END AS response_body,
       CASE WHEN status = 'in_progress' AND lease_expires_at IS NOT NULL
            THEN MAX(0, lease_expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
            ELSE 0 END AS retry_after_ms
  FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
   AND NOT (status = 'in_progress' AND fingerprint = $3
            AND (lease_expires_at IS NULL
                 OR lease_expires_at <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)))
