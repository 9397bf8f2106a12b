-- sql/sqlite/idem_claim.sql — idempotency begin() and run_once() claim, one round trip.
-- $1 scope, $2 key, $3 fingerprint (SHA-256, lower-case hex), $4 owner token of the new
-- attempt, $5 lease in ms, $6 retention in ms. Times are INTEGER ms since the Unix epoch
-- from SQLite's clock (julianday('now'), the same value for the whole statement).
--
-- A new key, or a record past its retention (treated as absent), is inserted as attempt 1.
-- An in_progress record with the SAME fingerprint whose lease has run out (or that a
-- retryable failure reopened, lease NULL) is taken over as attempt N+1, keeping its
-- recovery point. Otherwise every column keeps its value (the DO UPDATE is unconditional
-- so that RETURNING always yields the row - one round trip for a replay too; SQLite
-- writers are serialized anyway). The fingerprint is compared on this conflict path too.
-- In DO UPDATE every expression reads the row as it was; excluded.created_at is "now".
--
-- One row out (integer and text columns only), as in sql/postgresql/idem_claim.sql
--   outcome, status, attempt, recovery_point, response_code, response_body (hex), retry_after_ms
INSERT INTO dblock_idempotency
  (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
   response_code, response_body, created_at, updated_at, expires_at)
VALUES ($1, $2, $3, 'in_progress', $4, 1, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $5, NULL, NULL, NULL,
        CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $6)
ON CONFLICT (scope, idem_key) DO UPDATE SET
  owner = CASE WHEN expires_at <= excluded.created_at
                 OR (status = 'in_progress' AND fingerprint = excluded.fingerprint
                     AND (lease_expires_at IS NULL OR lease_expires_at <= excluded.created_at))
               THEN excluded.owner ELSE owner END,
  attempt = CASE WHEN expires_at <= excluded.created_at THEN 1
                 WHEN status = 'in_progress' AND fingerprint = excluded.fingerprint
                      AND (lease_expires_at IS NULL OR lease_expires_at <= excluded.created_at)
                 THEN attempt + 1 ELSE attempt END,
  recovery_point = CASE WHEN expires_at <= excluded.created_at THEN NULL ELSE recovery_point END,
  fingerprint = CASE WHEN expires_at <= excluded.created_at THEN excluded.fingerprint ELSE fingerprint END,
  status = CASE WHEN expires_at <= excluded.created_at THEN 'in_progress' ELSE status END,
  response_code = CASE WHEN expires_at <= excluded.created_at THEN NULL ELSE response_code END,
  response_body = CASE WHEN expires_at <= excluded.created_at THEN NULL ELSE response_body END,
  created_at = CASE WHEN expires_at <= excluded.created_at THEN excluded.created_at ELSE created_at END,
  lease_expires_at = CASE WHEN expires_at <= excluded.created_at
                            OR (status = 'in_progress' AND fingerprint = excluded.fingerprint
                                AND (lease_expires_at IS NULL OR lease_expires_at <= excluded.created_at))
                          THEN excluded.lease_expires_at ELSE lease_expires_at END,
  updated_at = CASE WHEN expires_at <= excluded.created_at
                      OR (status = 'in_progress' AND fingerprint = excluded.fingerprint
                          AND (lease_expires_at IS NULL OR lease_expires_at <= excluded.created_at))
                    THEN excluded.updated_at ELSE updated_at END,
  expires_at = CASE WHEN expires_at <= excluded.created_at
                      OR (status = 'in_progress' AND fingerprint = excluded.fingerprint
                          AND (lease_expires_at IS NULL OR lease_expires_at <= excluded.created_at))
                    THEN excluded.expires_at ELSE expires_at END
RETURNING
  CASE WHEN owner IS $4 THEN 'started'
       WHEN fingerprint <> $3 THEN 'mismatch'
       WHEN status = 'in_progress' THEN 'in_progress'
       ELSE 'replay' END AS outcome,
  status,
  attempt,
  recovery_point,
  CASE WHEN owner IS NOT $4 AND fingerprint = $3 AND status <> 'in_progress' THEN response_code END AS response_code,
  CASE WHEN owner IS NOT $4 AND fingerprint = $3 AND status <> 'in_progress'
       THEN CAST(response_body AS TEXT) END AS response_body,
  CASE WHEN owner IS NOT $4 AND status = 'in_progress' AND lease_expires_at IS NOT NULL
       THEN MAX(0, lease_expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
       ELSE 0 END AS retry_after_ms
