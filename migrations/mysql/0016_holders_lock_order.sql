-- dblock schema 0016 (MariaDB): the read-write and permit grant functions of migration 0010
-- lock the name's hold rows through the primary key before they delete the expired ones.
-- The delete alone may go through the expires_at index, locking its entries before the
-- primary records; a release of a hold locks the primary record, then its index entries, so
-- under many grants and releases of one name the two deadlock (MySQL error 1213), and InnoDB
-- picks the smaller transaction, the release, as the victim again at each retry. The functions are otherwise those of
-- migration 0010 (see there); DROP then CREATE: a rerun after a failure replaces them.

DROP FUNCTION IF EXISTS dblock_holders_acquire_rw;
CREATE FUNCTION dblock_holders_acquire_rw(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_write INT, p_fence BIGINT, p_ticket BIGINT, p_bound BIGINT, p_row_ttl_ms BIGINT,
  p_holder VARCHAR(255) CHARACTER SET utf8mb4, p_delay_ms BIGINT)
RETURNS VARCHAR(1024) CHARACTER SET utf8mb4
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_n BIGINT DEFAULT 0;
  DECLARE v_permits BIGINT DEFAULT 0;
  DECLARE v_own BIGINT DEFAULT 0;
  DECLARE v_own_fence BIGINT DEFAULT 0;
  DECLARE v_own_writes BIGINT DEFAULT 0;
  DECLARE v_others BIGINT DEFAULT 0;
  DECLARE v_writers BIGINT DEFAULT 0;
  DECLARE v_fence BIGINT DEFAULT 0;
  INSERT INTO dblock_lock_gates (name) VALUES (p_name) ON DUPLICATE KEY UPDATE name = name;
  -- The name's rows through the primary key first: a delete of the expired ones that found
  -- them through the expires_at index would lock index entries before their primary records,
  -- the opposite of a release (holders_release.sql: the primary record, then its index
  -- entries), and the two would deadlock with the release as the victim. Locked here, the
  -- primary records come first for both.
  SELECT COUNT(*) INTO v_n FROM dblock_lock_holders h FORCE INDEX (PRIMARY) WHERE h.name = p_name FOR UPDATE;
  DELETE FROM dblock_lock_holders WHERE name = p_name AND expires_at <= UTC_TIMESTAMP(6);
  -- The live holds, in one locking read: another kind, the session's own row, the others.
  SELECT COALESCE(SUM(h.kind <> 'r'), 0), COALESCE(MIN(IF(h.kind <> 'r', h.permits, NULL)), 0),
         COALESCE(SUM(h.owner = p_owner AND h.slot = 0), 0),
         COALESCE(MAX(IF(h.owner = p_owner AND h.slot = 0, h.fence, NULL)), 0),
         COALESCE(MAX(IF(h.owner = p_owner AND h.slot = 0, h.write_holds, NULL)), 0),
         COALESCE(SUM(h.owner <> p_owner), 0), COALESCE(SUM(h.owner <> p_owner AND h.write_holds > 0), 0)
    INTO v_n, v_permits, v_own, v_own_fence, v_own_writes, v_others, v_writers
    FROM dblock_lock_holders h
   WHERE h.name = p_name AND h.expires_at > UTC_TIMESTAMP(6) FOR UPDATE;
  IF v_n > 0 THEN
    RETURN CONCAT('K ', v_permits);
  END IF;
  IF v_own > 0 AND v_own_fence = p_fence THEN
    IF p_write = 0 OR v_own_writes > 0 THEN
      SET v_fence = v_own_fence;
    ELSEIF v_others > 0 THEN
      RETURN CONCAT('U ', v_others);
    ELSE
      SET v_fence = NEXTVAL(dblock_fence_seq);
    END IF;
    UPDATE dblock_lock_holders
       SET holds = holds + 1, write_holds = write_holds + p_write, fence = v_fence,
           expires_at = UTC_TIMESTAMP(6) + INTERVAL (p_row_ttl_ms * 1000) MICROSECOND
     WHERE name = p_name AND owner = p_owner AND slot = 0 AND expires_at > UTC_TIMESTAMP(6);
    IF ROW_COUNT() = 0 THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'dblock read-write lock row vanished inside its gate';
    END IF;
    RETURN CONCAT('R ', v_fence);
  END IF;
  IF v_own > 0 THEN
    DELETE FROM dblock_lock_holders WHERE name = p_name AND owner = p_owner AND slot = 0 AND fence = v_own_fence;
  END IF;
  IF (p_write = 1 AND v_others > 0) OR (p_write = 0 AND v_writers > 0) THEN
    RETURN COALESCE(dblock_holders_blocker(p_name, p_owner, 1 - p_write), 'B');
  END IF;
  SELECT COUNT(*) INTO v_n FROM dblock_lock_waiters w
   WHERE w.name = p_name AND w.ticket < p_bound AND w.expires_at > UTC_TIMESTAMP(6);
  IF v_n > 0 THEN
    RETURN 'L';
  END IF;
  IF p_ticket <> 0 THEN
    DELETE FROM dblock_lock_waiters WHERE ticket = p_ticket AND owner = p_owner;
  END IF;
  SET v_fence = NEXTVAL(dblock_fence_seq);
  INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                   expires_at, holder, lock_delay_ms)
  VALUES (p_name, p_owner, 0, 'r', 1, p_write, 0, v_fence, UTC_TIMESTAMP(6),
          UTC_TIMESTAMP(6) + INTERVAL (p_row_ttl_ms * 1000) MICROSECOND, p_holder, p_delay_ms);
  RETURN CONCAT('G ', v_fence);
END;

DROP FUNCTION IF EXISTS dblock_holders_acquire_permits;
CREATE FUNCTION dblock_holders_acquire_permits(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_permits INT, p_count INT, p_ticket BIGINT, p_bound BIGINT, p_row_ttl_ms BIGINT,
  p_holder VARCHAR(255) CHARACTER SET utf8mb4, p_delay_ms BIGINT)
RETURNS MEDIUMTEXT CHARACTER SET utf8mb4
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_n BIGINT DEFAULT 0;
  DECLARE v_permits BIGINT DEFAULT 0;
  DECLARE v_kinds BIGINT DEFAULT 0;
  DECLARE v_slot BIGINT DEFAULT 1;
  DECLARE v_next BIGINT DEFAULT 0;
  DECLARE v_got BIGINT DEFAULT 0;
  DECLARE v_fence BIGINT DEFAULT 0;
  DECLARE v_out MEDIUMTEXT CHARACTER SET utf8mb4 DEFAULT 'G';
  INSERT INTO dblock_lock_gates (name) VALUES (p_name) ON DUPLICATE KEY UPDATE name = name;
  -- The name's rows through the primary key first: a delete of the expired ones that found
  -- them through the expires_at index would lock index entries before their primary records,
  -- the opposite of a release (holders_release.sql: the primary record, then its index
  -- entries), and the two would deadlock with the release as the victim. Locked here, the
  -- primary records come first for both.
  SELECT COUNT(*) INTO v_n FROM dblock_lock_holders h FORCE INDEX (PRIMARY) WHERE h.name = p_name FOR UPDATE;
  DELETE FROM dblock_lock_holders WHERE name = p_name AND expires_at <= UTC_TIMESTAMP(6);
  -- The live holds, in one locking read: another kind, another permit count, the slots taken.
  SELECT COALESCE(SUM(h.kind <> 's'), 0), COALESCE(MIN(IF(h.permits <> p_permits, h.permits, NULL)), 0),
         COUNT(DISTINCT h.slot)
    INTO v_kinds, v_permits, v_n
    FROM dblock_lock_holders h
   WHERE h.name = p_name AND h.expires_at > UTC_TIMESTAMP(6) FOR UPDATE;
  IF v_kinds > 0 THEN
    RETURN 'K';
  END IF;
  IF v_permits > 0 THEN
    RETURN CONCAT('P ', v_permits);
  END IF;
  IF v_n + p_count > p_permits THEN
    RETURN COALESCE(dblock_holders_blocker(p_name, '', 0), 'B');
  END IF;
  SELECT COUNT(*) INTO v_n FROM dblock_lock_waiters w
   WHERE w.name = p_name AND w.ticket < p_bound AND w.expires_at > UTC_TIMESTAMP(6);
  IF v_n > 0 THEN
    RETURN 'L';
  END IF;
  IF p_ticket <> 0 THEN
    DELETE FROM dblock_lock_waiters WHERE ticket = p_ticket AND owner = p_owner;
  END IF;
  WHILE v_got < p_count DO
    IF v_slot > p_permits THEN
      SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'dblock semaphore has no free slot left for its grant';
    END IF;
    SELECT COUNT(*) INTO v_n FROM dblock_lock_holders h WHERE h.name = p_name AND h.slot = v_slot FOR UPDATE;
    IF v_n > 0 THEN
      -- Taken: on to the lowest slot the read shows free from here (checked by the locking read
      -- above on the next turn; rows only go away meanwhile, a new grant needs the gate).
      SELECT MIN(c.s) INTO v_next
        FROM (SELECT v_slot + 1 AS s
              UNION ALL
              SELECT h.slot + 1 FROM dblock_lock_holders h WHERE h.name = p_name AND h.slot > v_slot) c
       WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_holders n WHERE n.name = p_name AND n.slot = c.s);
      SET v_slot = GREATEST(COALESCE(v_next, v_slot + 1), v_slot + 1);
    ELSE
      SET v_fence = NEXTVAL(dblock_fence_seq);
      INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                       expires_at, holder, lock_delay_ms)
      VALUES (p_name, p_owner, v_slot, 's', 1, 0, p_permits, v_fence, UTC_TIMESTAMP(6),
              UTC_TIMESTAMP(6) + INTERVAL (p_row_ttl_ms * 1000) MICROSECOND, p_holder, p_delay_ms);
      SET v_out = CONCAT(v_out, ' ', v_slot, ' ', v_fence);
      SET v_got = v_got + 1;
      SET v_slot = v_slot + 1;
    END IF;
  END WHILE;
  RETURN v_out;
END;
