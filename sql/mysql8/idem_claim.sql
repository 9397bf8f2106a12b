-- sql/mysql8/idem_claim.sql — idempotency begin() and run_once() claim, first of two
-- statements: MySQL 8.0 returns no rows from an INSERT, so idem_claim_read.sql reads the row
-- back right after, on the same connection (lib/dialects/mysql8/idempotency.cpp).
-- $1 scope, $2 key, $3 fingerprint (SHA-256, lower-case hex), $4 owner token of the new
-- attempt, $5 lease in ms, $6 retention in ms.
--
-- A new key, or a record past its retention (treated as absent), is inserted as attempt 1.
-- An in_progress record with the SAME fingerprint whose lease has run out (or that a
-- retryable failure reopened, lease NULL) is taken over as attempt N+1, keeping its
-- recovery point. Otherwise every column keeps its value. The fingerprint is compared on
-- this conflict path too.
--
-- ON DUPLICATE KEY UPDATE assignments run left to right and later expressions see the new
-- values of earlier columns. So `owner` goes first and decides (it becomes this attempt's
-- random token $4 exactly when the claim is ours), every later column tests owner <=> $4,
-- and expires_at, which the conditions read, is assigned last. The inserted values are
-- named by the parameters again (not VALUES(col), deprecated in MySQL 8.0.20; a row alias is
-- MySQL-only); UTC_TIMESTAMP(6) is the statement's start time, the same in every place.
INSERT INTO dblock_idempotency
  (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
   response_code, response_body, created_at, updated_at, expires_at)
VALUES ($1, $2, $3, 'in_progress', $4, 1, UTC_TIMESTAMP(6) + INTERVAL ($5 * 1000) MICROSECOND,
        NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6),
        UTC_TIMESTAMP(6) + INTERVAL ($6 * 1000) MICROSECOND)
ON DUPLICATE KEY UPDATE
  owner            = IF(expires_at <= UTC_TIMESTAMP(6)
                        OR (status = 'in_progress' AND fingerprint = $3
                            AND (lease_expires_at IS NULL OR lease_expires_at <= UTC_TIMESTAMP(6))),
                        $4, owner),
  attempt          = IF(owner <=> $4, IF(expires_at <= UTC_TIMESTAMP(6), 1, attempt + 1), attempt),
  recovery_point   = IF(owner <=> $4 AND expires_at <= UTC_TIMESTAMP(6), NULL, recovery_point),
  response_code    = IF(owner <=> $4, NULL, response_code),
  response_body    = IF(owner <=> $4, NULL, response_body),
  created_at       = IF(owner <=> $4 AND expires_at <= UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), created_at),
  fingerprint      = IF(owner <=> $4, $3, fingerprint),
  status           = IF(owner <=> $4, 'in_progress', status),
  lease_expires_at = IF(owner <=> $4, UTC_TIMESTAMP(6) + INTERVAL ($5 * 1000) MICROSECOND, lease_expires_at),
  updated_at       = IF(owner <=> $4, UTC_TIMESTAMP(6), updated_at),
  expires_at       = IF(owner <=> $4, UTC_TIMESTAMP(6) + INTERVAL ($6 * 1000) MICROSECOND, expires_at)
