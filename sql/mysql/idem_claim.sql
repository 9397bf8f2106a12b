-- sql/mysql/idem_claim.sql — idempotency begin() and run_once() claim, one round trip
-- (MariaDB 10.5+ INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING returns the row as it is
-- after the statement, inserted, updated or left unchanged).
-- $1 scope, $2 key, $3 fingerprint (SHA-256, lower-case hex), $4 owner token of the new
-- attempt, $5 lease in ms, $6 retention in ms.
--
-- A new key is inserted as attempt 1. An in_progress record with the SAME fingerprint whose
-- lease has run out (or that a retryable failure reopened, lease NULL) is taken over as
-- attempt N+1, keeping its recovery point. Otherwise every column keeps its value and the
-- record is read back. A record past its retention is left as it is and reported with
-- expired = 1: the library deletes it (idem_drop_expired.sql) and claims again, so it starts
-- over as attempt 1, as if absent. Keeping that rare case out of this statement keeps the
-- update list to the five columns a takeover changes; each listed column costs every claim,
-- a new key's too, server time.
--
-- MariaDB assigns ON DUPLICATE KEY UPDATE columns left to right, and later expressions see
-- the new values of earlier columns. So `owner` goes first and decides (it becomes this
-- attempt's random token exactly when the claim is ours), every later column tests
-- owner <=> VALUES(owner), and expires_at, which the condition reads, is assigned last.
-- VALUES(created_at) is this statement's UTC_TIMESTAMP(6), the same instant RETURNING's
-- UTC_TIMESTAMP(6) reads.
--
-- One row out: the record's own columns as they are after the statement; the library decides
-- the outcome from them (lib/dialects/mysql/idempotency.cpp), by the rule the other dialects'
-- claims apply on the server: started when owner is this attempt's token ($4); else mismatch
-- when fingerprint differs from $3; else in_progress, or replay of a completed or failed record
-- (its response goes to the same fingerprint only). Computing that here cost more server time
-- than the columns themselves.
--   owner, fingerprint, status, attempt, recovery_point, response_code, response_body (hex),
--   lease_left_us (NULL when the record has no lease; negative when it ran out), expired (1/0)
INSERT INTO dblock_idempotency
  (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
   response_code, response_body, created_at, updated_at, expires_at)
VALUES ($1, $2, $3, 'in_progress', $4, 1, UTC_TIMESTAMP(6) + INTERVAL ($5 * 1000) MICROSECOND,
        NULL, NULL, NULL, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6),
        UTC_TIMESTAMP(6) + INTERVAL ($6 * 1000) MICROSECOND)
ON DUPLICATE KEY UPDATE
  owner            = IF(expires_at > VALUES(created_at) AND status = 'in_progress'
                        AND fingerprint = VALUES(fingerprint)
                        AND (lease_expires_at IS NULL OR lease_expires_at <= VALUES(created_at)),
                        VALUES(owner), owner),
  attempt          = IF(owner <=> VALUES(owner), attempt + 1, attempt),
  lease_expires_at = IF(owner <=> VALUES(owner), VALUES(lease_expires_at), lease_expires_at),
  updated_at       = IF(owner <=> VALUES(owner), VALUES(updated_at), updated_at),
  expires_at       = IF(owner <=> VALUES(owner), VALUES(expires_at), expires_at)
RETURNING
  owner, fingerprint, status, attempt, recovery_point, response_code, HEX(response_body),
  CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) AS SIGNED) AS lease_left_us,
  expires_at <= UTC_TIMESTAMP(6) AS expired
