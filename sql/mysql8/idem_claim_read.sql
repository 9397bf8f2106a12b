-- sql/mysql8/idem_claim_read.sql — idempotency claim, second statement: the record of scope
-- $1, key $2 as idem_claim.sql left it, judged for the claim of fingerprint $3 by the
-- attempt token $4. One row out, the columns of every dialect's claim
--   outcome, status, attempt, recovery_point, response_code, response_body (hex), retry_after_ms
-- No row: the record was reaped in between (the caller claims again).
SELECT
  CASE WHEN owner <=> $4 THEN 'started'
       WHEN fingerprint <> $3 THEN 'mismatch'
       WHEN status = 'in_progress' THEN 'in_progress'
       ELSE 'replay' END AS outcome,
  status,
  attempt,
  recovery_point,
  CASE WHEN NOT (owner <=> $4) AND fingerprint = $3 AND status <> 'in_progress' THEN response_code END AS response_code,
  CASE WHEN NOT (owner <=> $4) AND fingerprint = $3 AND status <> 'in_progress' THEN HEX(response_body) END AS response_body,
  CASE WHEN NOT (owner <=> $4) AND status = 'in_progress' AND lease_expires_at IS NOT NULL
       THEN GREATEST(0, CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) / 1000))
       ELSE 0 END AS retry_after_ms
  FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2
