-- dblock schema 0014 (MariaDB): a release hands a contended lease lock to the head of its
-- wait line in its own commit (dblock_lock_release_to_line below). Without it a contended name
-- changes hands in two durable commits (the holder's delete, then the waiter's own grant
-- after it looked again); with it, in one, and the waiter only reads its grant
-- (lock_handed.sql).
--  - A ticket carries the grant its waiter asked for: grant_ttl_ms (the lease plus the lock
--    delay; 0 marks a waiter nobody may hand a lease row, a read-write lock's or semaphore's:
--    they share the line table), holder, lock_delay_ms.
--  - dblock_locks.ticket names the ticket a handed grant was made for: the waiter's try with
--    that ticket as its line bound is a grant, not a re-entry (holds stay as they are).
ALTER TABLE dblock_locks ADD COLUMN IF NOT EXISTS ticket BIGINT NULL;
ALTER TABLE dblock_lock_waiters
  ADD COLUMN IF NOT EXISTS grant_ttl_ms  BIGINT       NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS holder        VARCHAR(255) NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS lock_delay_ms BIGINT       NOT NULL DEFAULT 0;

-- The final release of lease lock p_name by p_owner, grant p_fence, that hands the name to
-- the head of its wait line, in one statement (sql/mysql/lock_release_to_line.sql): one round
-- trip, one commit, no lock held across round trips. Returns 0 when the row is no longer
-- that grant (nothing changed), 1 when it was deleted (nobody waits, or the head waits for a
-- read-write lock or semaphore), 2 when it was handed: the row becomes the head's grant -
-- its owner, holds 1, a new fence, expiry now + the ticket's grant_ttl_ms, ticket = the
-- head's ticket - and the ticket is deleted.
-- The head is the lowest live ticket, read FOR UPDATE before the row is written (the order a
-- grant reads the line and then writes the row): a waiter deleting its ticket at that moment
-- (its wait ended) waits for this statement, then finds the ticket gone and gives the
-- handed row back (lock_drop_handed.sql); a ticket is either handed a grant or deleted by its
-- waiter, never both. The fence is drawn where the row is ours and
-- locked (NEXTVAL in the UPDATE), as in lock_acquire.sql, so fences of one name keep
-- increasing in grant order.
DROP FUNCTION IF EXISTS dblock_lock_release_to_line;
CREATE FUNCTION dblock_lock_release_to_line(p_name VARBINARY(255), p_owner CHAR(32) CHARACTER SET ascii,
  p_fence BIGINT)
RETURNS INT
NOT DETERMINISTIC MODIFIES SQL DATA SQL SECURITY INVOKER
BEGIN
  DECLARE v_ticket BIGINT DEFAULT NULL;
  DECLARE v_owner CHAR(32) CHARACTER SET ascii DEFAULT NULL;
  DECLARE v_ttl BIGINT DEFAULT 0;
  DECLARE v_holder VARCHAR(255) CHARACTER SET utf8mb4 DEFAULT '';
  DECLARE v_delay BIGINT DEFAULT 0;
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
      RETURN 2;
    END IF;
    RETURN 0;
  END IF;
  DELETE FROM dblock_locks WHERE name = p_name AND owner = p_owner AND fence = p_fence;
  RETURN IF(ROW_COUNT() > 0, 1, 0);
END;
