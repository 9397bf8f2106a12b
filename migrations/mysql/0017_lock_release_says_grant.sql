-- dblock schema 0017 (MariaDB): a release that hands a lease lock to the head of its wait line
-- answers with the grant it made, so that the releasing process can pass it to a waiter of its
-- own (a thread of the same process): that waiter holds without reading the grant or
-- confirming it, because the release's own commit has returned, its redo flushed.
-- dblock_lock_release_to_line_grant is dblock_lock_release_to_line of migration 0014 (same
-- reads and writes in the same order) answering one text: '0' (the row was no longer this
-- grant, nothing changed), '1' (deleted) or '2 <owner> <ticket> <fence>' (handed: the head's
-- owner token, its ticket, the new grant's fence). dblock_lock_release_to_line (migration 0014)
-- stays as it is for libraries that still call it: replacing it would leave a moment without it.
DROP FUNCTION IF EXISTS dblock_lock_release_to_line_grant;
CREATE FUNCTION dblock_lock_release_to_line_grant(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_fence BIGINT)
RETURNS VARCHAR(80) CHARACTER SET ascii
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_ticket BIGINT DEFAULT NULL;
  DECLARE v_owner CHAR(32) CHARACTER SET ascii DEFAULT NULL;
  DECLARE v_ttl BIGINT DEFAULT 0;
  DECLARE v_holder VARCHAR(255) CHARACTER SET utf8mb4 DEFAULT '';
  DECLARE v_delay BIGINT DEFAULT 0;
  DECLARE v_fence BIGINT DEFAULT 0;
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
           lock_delay_ms = v_delay, ticket = v_ticket
     WHERE name = p_name AND owner = p_owner AND fence = p_fence;
    IF ROW_COUNT() > 0 THEN
      DELETE FROM dblock_lock_waiters WHERE ticket = v_ticket;
      SELECT fence INTO v_fence FROM dblock_locks WHERE name = p_name;
      RETURN CONCAT('2 ', v_owner, ' ', v_ticket, ' ', v_fence);
    END IF;
    RETURN '0';
  END IF;
  DELETE FROM dblock_locks WHERE name = p_name AND owner = p_owner AND fence = p_fence;
  RETURN IF(ROW_COUNT() > 0, '1', '0');
END;
