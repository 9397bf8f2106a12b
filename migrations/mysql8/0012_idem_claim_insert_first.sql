-- dblock schema 0012 (MySQL 8.0 syntax; MariaDB accepts it too): a second idempotency claim
-- function, dblock_idem_claim_insert, that inserts first. begin() sends it outside a
-- transaction (sql/mysql8/idem_claim_insert.sql); a new key, the common case, then costs one
-- INSERT inside the function instead of a read that misses, the upsert and a read back.
--   insert - INSERT IGNORE of the key as attempt 1; when it inserts, 'started' at once.
--            It waits for a concurrent, uncommitted insert of the key, then sees the duplicate.
--   read   - on a duplicate, the record is read; one that is live and not open to a takeover
--            (a replay, a mismatch, an attempt in progress with a live lease) is reported.
--   else   - NULL: the record is past its retention or open to a takeover, or was deleted
--            after the duplicate was seen. The library then sends dblock_idem_claim (migration
--            0011), a second round trip on this rare path.
-- Why it never takes over itself: InnoDB leaves a shared lock on a record whose key an insert
-- found duplicate, for the rest of the transaction. Two claims updating the same record after
-- that would each wait for the other's shared lock, a deadlock. Outside a transaction the
-- statement's locks end with it, so dblock_idem_claim's upsert, sent next, queues on the
-- row's exclusive lock behind the others. Inside a transaction (run_once) they would last until
-- commit, so there the library sends dblock_idem_claim alone, which reads without a lock.
-- IGNORE turns only the duplicate key into a warning here: every other value was checked by
-- the library before it was sent (lengths, fingerprint, token), within the columns' sizes.
-- The answer is the text of dblock_idem_claim (lib/dialects/common/families.cpp):
--   outcome status attempt code retry_after_ms body recovery_point
-- Functions rather than procedures, SQL SECURITY INVOKER, and the binary-log caveat
-- (log_bin_trust_function_creators): as migration 0010. The body has no inner statement
-- ending in the word END (see lib/core/catalog.cpp). DROP then CREATE: a rerun replaces it.
DROP FUNCTION IF EXISTS dblock_idem_claim_insert;
CREATE FUNCTION dblock_idem_claim_insert(p_scope VARBINARY(64), p_key VARBINARY(255),
  p_fp CHAR(64) CHARACTER SET ascii, p_owner CHAR(32) CHARACTER SET ascii,
  p_lease_ms BIGINT, p_retention_ms BIGINT)
RETURNS LONGTEXT CHARACTER SET utf8mb4
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v LONGTEXT CHARACTER SET utf8mb4 DEFAULT NULL;
  INSERT IGNORE INTO dblock_idempotency
    (scope, idem_key, fingerprint, status, owner, attempt, lease_expires_at, recovery_point,
     response_code, response_body, created_at, updated_at, expires_at)
  VALUES (p_scope, p_key, p_fp, 'in_progress', p_owner, 1,
          UTC_TIMESTAMP(6) + INTERVAL (p_lease_ms * 1000) MICROSECOND, NULL, NULL, NULL,
          UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL (p_retention_ms * 1000) MICROSECOND);
  IF ROW_COUNT() = 1 THEN
    RETURN 'started in_progress 1 - 0 - -';
  END IF;
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
  RETURN v;
END;
