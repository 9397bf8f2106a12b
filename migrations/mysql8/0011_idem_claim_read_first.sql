-- dblock schema 0011 (MySQL 8.0 syntax; MariaDB accepts it too): the idempotency claim as a
-- stored function that reads before it writes, so that begin() and run_once() claim in one
-- statement, one round trip (sql/mysql8/idem_claim.sql: SELECT dblock_idem_claim(...)). MySQL
-- 8.0 returns no rows from an INSERT: without the function a claim is an upsert and a read back,
-- two round trips.
--   read   - the record is read first (nothing written). A record that is live and not open to
--            a takeover (a replay, a mismatch, an attempt in progress with a live lease) is
--            reported at once: one index lookup, no INSERT.
--   upsert - otherwise (no record, one past its retention, or one in progress with the same
--            fingerprint and a lapsed or no lease) the upsert runs: a new key or a record past
--            its retention is inserted as attempt 1, a lapsed attempt with the same fingerprint
--            is taken over as N+1 keeping its recovery point, anything else keeps every column.
--            It waits for a concurrent, uncommitted claim of the key (a run_once() in its
--            transaction) and then decides on the committed row.
--   report - the record as the upsert left it, read under the row lock the upsert holds.
-- Everything the SELECT does commits or rolls back as one statement (or with the caller's
-- transaction, inside run_once()).
-- The answer is one text (parsed in lib/dialects/common/families.cpp), its fields separated by
-- single spaces, the recovery point last since it may contain spaces:
--   outcome status attempt code retry_after_ms body recovery_point
-- outcome started | replay | in_progress | mismatch; code '-' unless a replay; body 'x' then
-- the stored body in hex for a replay, else '-'; recovery_point '+' then the text, or '-'.
-- Functions rather than procedures, SQL SECURITY INVOKER, and the binary-log caveat
-- (log_bin_trust_function_creators): as migration 0010. The body has no inner statement
-- ending in the word END (see lib/core/catalog.cpp). DROP then CREATE: a rerun replaces it.
DROP FUNCTION IF EXISTS dblock_idem_claim;
CREATE FUNCTION dblock_idem_claim(p_scope VARBINARY(64), p_key VARBINARY(255),
  p_fp CHAR(64) CHARACTER SET ascii, p_owner CHAR(32) CHARACTER SET ascii,
  p_lease_ms BIGINT, p_retention_ms BIGINT)
RETURNS LONGTEXT CHARACTER SET utf8mb4
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v LONGTEXT CHARACTER SET utf8mb4 DEFAULT NULL;
  SELECT CONCAT(IF(fingerprint <> p_fp, 'mismatch', IF(status = 'in_progress', 'in_progress', 'replay')), ' ',
                status, ' ', attempt, ' ',
                IF(fingerprint = p_fp AND status <> 'in_progress', COALESCE(response_code, '-'), '-'), ' ',
                IF(status = 'in_progress' AND lease_expires_at IS NOT NULL,
                   GREATEST(0, CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) / 1000)), 0), ' ',
                IF(fingerprint = p_fp AND status <> 'in_progress', COALESCE(CONCAT('x', HEX(response_body)), '-'), '-'), ' ',
                COALESCE(CONCAT('+', recovery_point), '-'))
    INTO v
    FROM dblock_idempotency
   WHERE scope = p_scope AND idem_key = p_key AND expires_at > UTC_TIMESTAMP(6)
     AND NOT (status = 'in_progress' AND fingerprint = p_fp
              AND (lease_expires_at IS NULL OR lease_expires_at <= UTC_TIMESTAMP(6)));
  IF v IS NOT NULL THEN
    RETURN v;
  END IF;
  -- ON DUPLICATE KEY UPDATE assigns left to right, later expressions seeing the new values:
  -- owner goes first and decides (it becomes p_owner exactly when the claim is ours), every
  -- later column tests owner <=> p_owner, and expires_at, which the conditions read, goes last.
  INSERT INTO dblock_idempotency
    (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
     response_code, response_body, created_at, updated_at, expires_at)
  VALUES (p_scope, p_key, p_fp, 'in_progress', p_owner, 1,
          UTC_TIMESTAMP(6) + INTERVAL (p_lease_ms * 1000) MICROSECOND, NULL, NULL, NULL,
          UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL (p_retention_ms * 1000) MICROSECOND)
  ON DUPLICATE KEY UPDATE
    owner            = IF(expires_at <= UTC_TIMESTAMP(6)
                          OR (status = 'in_progress' AND fingerprint = p_fp
                              AND (lease_expires_at IS NULL OR lease_expires_at <= UTC_TIMESTAMP(6))),
                          p_owner, owner),
    attempt          = IF(owner <=> p_owner, IF(expires_at <= UTC_TIMESTAMP(6), 1, attempt + 1), attempt),
    recovery_point   = IF(owner <=> p_owner AND expires_at <= UTC_TIMESTAMP(6), NULL, recovery_point),
    response_code    = IF(owner <=> p_owner, NULL, response_code),
    response_body    = IF(owner <=> p_owner, NULL, response_body),
    created_at       = IF(owner <=> p_owner AND expires_at <= UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), created_at),
    fingerprint      = IF(owner <=> p_owner, p_fp, fingerprint),
    status           = IF(owner <=> p_owner, 'in_progress', status),
    lease_expires_at = IF(owner <=> p_owner, UTC_TIMESTAMP(6) + INTERVAL (p_lease_ms * 1000) MICROSECOND,
                          lease_expires_at),
    updated_at       = IF(owner <=> p_owner, UTC_TIMESTAMP(6), updated_at),
    expires_at       = IF(owner <=> p_owner, UTC_TIMESTAMP(6) + INTERVAL (p_retention_ms * 1000) MICROSECOND,
                          expires_at);
  SELECT CONCAT(IF(owner <=> p_owner, 'started',
                   IF(fingerprint <> p_fp, 'mismatch', IF(status = 'in_progress', 'in_progress', 'replay'))), ' ',
                status, ' ', attempt, ' ',
                IF(NOT (owner <=> p_owner) AND fingerprint = p_fp AND status <> 'in_progress',
                   COALESCE(response_code, '-'), '-'), ' ',
                IF(NOT (owner <=> p_owner) AND status = 'in_progress' AND lease_expires_at IS NOT NULL,
                   GREATEST(0, CEIL(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), lease_expires_at) / 1000)), 0), ' ',
                IF(NOT (owner <=> p_owner) AND fingerprint = p_fp AND status <> 'in_progress',
                   COALESCE(CONCAT('x', HEX(response_body)), '-'), '-'), ' ',
                COALESCE(CONCAT('+', recovery_point), '-'))
    INTO v
    FROM dblock_idempotency
   WHERE scope = p_scope AND idem_key = p_key
     FOR UPDATE;
  RETURN v;
END;
