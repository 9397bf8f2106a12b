-- dblock schema 0006 (MySQL 8.0): the wait line lives in a table. A waiting acquire()
-- refused once takes a ticket: a row of dblock_lock_waiters (name, ticket from
-- AUTO_INCREMENT, owner, expiry) renewed with the session's leases. A free or expired name
-- is granted only to the try whose line bound is at most the lowest live ticket of the name
-- (sql/mysql8/lock_acquire.sql): the lowest ticket's own try, a try of a name nobody waits for, or a
-- re-entry. A waiter that stops running stops renewing, and its ticket stops counting at its
-- expiry. No connection is held per waiter.
CREATE TABLE IF NOT EXISTS dblock_lock_waiters (
  ticket     BIGINT         NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name       VARBINARY(255) NOT NULL,
  owner      CHAR(32)       CHARACTER SET ascii NOT NULL,
  expires_at DATETIME(6)    NOT NULL,
  KEY dblock_lock_waiters_name (name, ticket),
  KEY dblock_lock_waiters_owner (owner)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
