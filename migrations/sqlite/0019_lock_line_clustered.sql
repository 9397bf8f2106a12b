-- dblock schema 0019 (SQLite): fewer pages per hand-off of a contended lease lock.
--  - The wait line is clustered by (name, ticket), WITHOUT ROWID and without secondary
--    indexes: a ticket's insert or delete writes one page of the table, where a rowid table,
--    its (name, ticket) and owner indexes and the AUTOINCREMENT counter wrote up to four. The
--    reads of a line (its head, the tickets below a bound) are ranges of that key; the
--    statements that find tickets by owner or expiry alone (renewal, a timed-out wait's
--    leave, the reaper) scan the table, which holds only the tickets of waiting acquires.
--  - Ticket numbers come from dblock_line_tickets, a counter row advanced by a trigger on
--    each ticket's insert: never reused, so a new waiter never gets a number below a live one,
--    and a hand-off record naming an owner and a ticket names one ticket only. It starts
--    above every number handed out before.
--  - A release that hands the lock on is one statement (sql/sqlite/lock_hand_off.sql: UPDATE
--    dblock_locks ... FROM the head of the line), autocommitted unless it runs inside the
--    caller's transaction; the trigger dblock_lock_hand_off_takes_ticket deletes the ticket
--    the grant was made for inside that statement. Only lock_hand_off.sql sets
--    dblock_locks.ticket.
CREATE TABLE dblock_line_tickets (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT INTO dblock_line_tickets (id, last)
SELECT 1, MAX(COALESCE((SELECT MAX(ticket) FROM dblock_lock_waiters), 0),
              COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'dblock_lock_waiters'), 0),
              COALESCE((SELECT MAX(ticket) FROM dblock_locks), 0));
CREATE TABLE dblock_lock_waiters_by_name (
  name          TEXT    NOT NULL CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  ticket        INTEGER NOT NULL,
  owner         TEXT    NOT NULL,
  expires_at    INTEGER NOT NULL,
  grant_ttl_ms  INTEGER NOT NULL DEFAULT 0,
  holder        TEXT    NOT NULL DEFAULT '',
  lock_delay_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (name, ticket)
) WITHOUT ROWID;
INSERT INTO dblock_lock_waiters_by_name (name, ticket, owner, expires_at, grant_ttl_ms, holder, lock_delay_ms)
SELECT name, ticket, owner, expires_at, grant_ttl_ms, holder, lock_delay_ms FROM dblock_lock_waiters;
DROP TABLE dblock_lock_waiters;
ALTER TABLE dblock_lock_waiters_by_name RENAME TO dblock_lock_waiters;
CREATE TRIGGER dblock_line_ticket_on_insert AFTER INSERT ON dblock_lock_waiters
BEGIN
  UPDATE dblock_line_tickets SET last = NEW.ticket WHERE id = 1 AND last < NEW.ticket;
END;
CREATE TRIGGER dblock_lock_hand_off_takes_ticket AFTER UPDATE OF ticket ON dblock_locks
WHEN NEW.ticket IS NOT NULL
BEGIN
  DELETE FROM dblock_lock_waiters WHERE name = NEW.name AND ticket = NEW.ticket;
END;
