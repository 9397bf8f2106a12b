-- dblock schema 0019 (SQLite): a release that hands a contended lease lock to the head of its
-- wait line is one statement (sql/sqlite/lock_hand_off.sql: UPDATE dblock_locks ... FROM the
-- head of the line), autocommitted unless it runs inside the caller's transaction. This
-- trigger deletes the ticket the grant was made for inside that statement, so the waiter's
-- place goes in the same commit as its grant. Only lock_hand_off.sql sets dblock_locks.ticket.
CREATE TRIGGER IF NOT EXISTS dblock_lock_hand_off_takes_ticket AFTER UPDATE OF ticket ON dblock_locks
WHEN NEW.ticket IS NOT NULL
BEGIN
  DELETE FROM dblock_lock_waiters WHERE ticket = NEW.ticket;
END;
