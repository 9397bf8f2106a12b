-- dblock schema 0018 (MariaDB): a hand-off whose head can hold without a confirming write.
-- InnoDB shows a commit to other sessions before its redo is flushed, so a head that read its
-- handed grant used to confirm it with a write of its own (lock_handed_confirm.sql: a second
-- flush per hand-off). dblock_lock_release_to_line_locked is dblock_lock_release_to_line_grant
-- of migration 0017 (same reads and writes in the same order) that first takes the server lock
-- 'dblock:h:' || SHA1(name) (GET_LOCK, no wait) and keeps it past its own statement: the
-- library frees it (lock_hand_off_unlock.sql) only after the release's answer arrived, that is
-- after the commit and its flush. A hand-off made under that lock records the head's ticket in
-- locked_ticket; the head that reads it there waits for the same server lock
-- (lock_handed_wait.sql) and, once it got it, knows the grant is durable without a write.
-- The lock is taken only when the caller asks for it (p_lock = 1: not on a Galera node, where
-- server locks are local to one node) and the statement commits on its own (no transaction of
-- the caller open, autocommit on); when the lock is busy, or when nothing is handed, no ticket
-- is recorded and the function frees what it took. A lock this connection already holds (a
-- free that never arrived) is reused, not counted twice. Answers as 0017's function, a hand-off
-- with one more field: '2 <owner> <ticket> <fence> <locked>' (locked 1: the caller frees the
-- server lock). Tickets are never reused, so a locked_ticket left from an older grant never
-- names a later one. dblock_lock_release_to_line_grant (0017) stays for libraries that still
-- call it; their heads find no locked_ticket and confirm.
ALTER TABLE dblock_locks ADD COLUMN IF NOT EXISTS locked_ticket BIGINT NULL;
DROP FUNCTION IF EXISTS dblock_lock_release_to_line_locked;
CREATE FUNCTION dblock_lock_release_to_line_locked(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_fence BIGINT, p_lock INT)
RETURNS VARCHAR(90) CHARACTER SET ascii
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_ticket BIGINT DEFAULT NULL;
  DECLARE v_owner CHAR(32) CHARACTER SET ascii DEFAULT NULL;
  DECLARE v_ttl BIGINT DEFAULT 0;
  DECLARE v_holder VARCHAR(255) CHARACTER SET utf8mb4 DEFAULT '';
  DECLARE v_delay BIGINT DEFAULT 0;
  DECLARE v_fence BIGINT DEFAULT 0;
  DECLARE v_key VARCHAR(64) CHARACTER SET ascii DEFAULT CONCAT('dblock:h:', SHA1(p_name));
  DECLARE v_locked INT DEFAULT 0;
  DECLARE v_done INT DEFAULT 0;
  IF p_lock = 1 AND @@in_transaction = 0 AND @@autocommit = 1 THEN
    SET v_locked = IF(COALESCE(IS_USED_LOCK(v_key) = CONNECTION_ID(), 0), 1, COALESCE(GET_LOCK(v_key, 0), 0));
  END IF;
  SELECT w.ticket, w.owner, w.grant_ttl_ms, w.holder, w.lock_delay_ms
    INTO v_ticket, v_owner, v_ttl, v_holder, v_delay
    FROM dblock_lock_waiters w
   WHERE w.name = p_name AND w.expires_at > UTC_TIMESTAMP(6)
   ORDER BY w.ticket
   LIMIT 1
     FOR UPDATE;
  IF v_ticket IS NOT NULL AND v_ttl > 0 THEN
    UPDATE dblock_locks
       SET owner = v_owner, holds = 1, fence = NEXTVAL(dblock_fence_seq), acquired_at = UTC_TIMESTAMP(6),
           expires_at = UTC_TIMESTAMP(6) + INTERVAL (v_ttl * 1000) MICROSECOND, holder = v_holder,
           lock_delay_ms = v_delay, ticket = v_ticket, locked_ticket = IF(v_locked = 1, v_ticket, NULL)
     WHERE name = p_name AND owner = p_owner AND fence = p_fence;
    IF ROW_COUNT() > 0 THEN
      DELETE FROM dblock_lock_waiters WHERE ticket = v_ticket;
      SELECT fence INTO v_fence FROM dblock_locks WHERE name = p_name;
      RETURN CONCAT('2 ', v_owner, ' ', v_ticket, ' ', v_fence, ' ', v_locked);
    END IF;
    IF v_locked = 1 THEN DO RELEASE_LOCK(v_key); END IF;
    RETURN '0';
  END IF;
  DELETE FROM dblock_locks WHERE name = p_name AND owner = p_owner AND fence = p_fence;
  SET v_done = ROW_COUNT();
  IF v_locked = 1 THEN DO RELEASE_LOCK(v_key); END IF;
  RETURN IF(v_done > 0, '1', '0');
END;
