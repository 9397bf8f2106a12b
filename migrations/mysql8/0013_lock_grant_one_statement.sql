-- dblock schema 0013 (MySQL 8.0 syntax; MariaDB accepts it too): a lease lock's grant in one
-- statement. On MySQL 8.0 an INSERT returns no rows and there are no sequences, so a grant
-- is an upsert that writes the row (a new grant with fence 0, "not drawn yet"), a draw from
-- the fence counter and the fence's write while the row is ours, and a read of the row.
-- As separate autocommit statements a new grant would take four round trips and three
-- commits; inside dblock_lock_grant it is one statement, one commit (sql/mysql8/lock_acquire.sql:
-- SELECT dblock_lock_grant(...)). The steps, in this order:
--   upsert - acquire or re-enter lease lock p_name for owner p_owner with a TTL of p_ttl_ms;
--            p_holder = holder text; p_delay_ms = the holder's lock delay, already included in
--            p_ttl_ms, stored for `dblock locks`; p_line_bound = the line bound: the row is
--            written only if no live waiter of the name (dblock_lock_waiters) has a ticket
--            below it (the maximum bigint for a try without a ticket, the waiter's own ticket
--            for its try, 0 for a re-entry). Inserts a fresh grant, takes over an expired row,
--            or re-enters a live row of the same owner; a live row of another owner is left
--            exactly as it was. Assignments run left to right, each seeing the columns
--            already assigned (MySQL 8.0 and MariaDB alike), so holds/fence/acquired_at/holder
--            are decided from the old owner and expiry, then owner from the old expiry, and
--            expires_at last from the NEW owner.
--   draw   - only when the row is p_owner's with fence 0 (a new grant): the counter row
--            advances through LAST_INSERT_ID(value + 1), and its row lock orders concurrent
--            draws; the row then takes that value as its fence. Drawing after the row is
--            written keeps grants of one name in fence order: the next grant of the name can
--            only start after this one ends, and so draws later.
--   report - the row as it is now.
-- Everything the SELECT does commits or rolls back as one statement (or with the caller's
-- transaction): a draw that fails (a deadlock victim, a Galera certification conflict)
-- takes its row back with it, and the statement can simply run again.
-- The answer is one text, fields separated by single spaces, the holder last since it may
-- contain spaces (lib/dialects/mysql8/lease_table.cpp):
--   granted fence holds expires_in_ms lock_delay_ms expires_at holder
-- granted 1 when p_owner holds the lock live, else 0; expires_at as 2026-01-02T03:04:05.000000Z.
-- NULL when the name has no row: the line bound refused a free name (nothing written).
-- Functions rather than procedures, SQL SECURITY INVOKER, and the binary-log caveat
-- (log_bin_trust_function_creators): as migration 0010. The body has no inner statement
-- ending in the word END (see lib/core/catalog.cpp). DROP then CREATE: a rerun replaces it.
DROP FUNCTION IF EXISTS dblock_lock_grant;
CREATE FUNCTION dblock_lock_grant(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_ttl_ms BIGINT, p_holder VARCHAR(255) CHARACTER SET utf8mb4, p_delay_ms BIGINT, p_line_bound BIGINT)
RETURNS VARCHAR(1024) CHARACTER SET utf8mb4
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v VARCHAR(1024) CHARACTER SET utf8mb4 DEFAULT NULL;
  INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
  SELECT p_name, p_owner, 1, 0, UTC_TIMESTAMP(6),
         UTC_TIMESTAMP(6) + INTERVAL (p_ttl_ms * 1000) MICROSECOND, p_holder, p_delay_ms
    FROM DUAL
   WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                      WHERE name = p_name AND expires_at > UTC_TIMESTAMP(6) AND ticket < p_line_bound)
  ON DUPLICATE KEY UPDATE
    holds       = IF(owner = p_owner AND expires_at > UTC_TIMESTAMP(6), IF(fence = 0, holds, holds + 1),
                     IF(expires_at <= UTC_TIMESTAMP(6), 1, holds)),
    fence       = IF(owner = p_owner AND expires_at > UTC_TIMESTAMP(6), fence,
                     IF(expires_at <= UTC_TIMESTAMP(6), 0, fence)),
    acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), acquired_at),
    holder      = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = p_owner, p_holder, holder),
    owner       = IF(expires_at <= UTC_TIMESTAMP(6), p_owner, owner),
    expires_at  = IF(owner = p_owner, UTC_TIMESTAMP(6) + INTERVAL (p_ttl_ms * 1000) MICROSECOND, expires_at),
    lock_delay_ms = IF(owner = p_owner, p_delay_ms, lock_delay_ms);
  UPDATE dblock_fence_counter SET value = LAST_INSERT_ID(value + 1)
   WHERE id = 1
     AND EXISTS (SELECT 1 FROM dblock_locks WHERE name = p_name AND owner = p_owner AND fence = 0);
  IF ROW_COUNT() > 0 THEN
    UPDATE dblock_locks SET fence = LAST_INSERT_ID() WHERE name = p_name AND owner = p_owner AND fence = 0;
  END IF;
  SELECT CONCAT(IF(owner = p_owner AND expires_at > UTC_TIMESTAMP(6), 1, 0), ' ', fence, ' ', holds, ' ',
                CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), ' ',
                lock_delay_ms, ' ', DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'), ' ', holder)
    INTO v
    FROM dblock_locks WHERE name = p_name;
  RETURN v;
END;
