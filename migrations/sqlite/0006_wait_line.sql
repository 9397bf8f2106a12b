-- dblock schema 0006 (SQLite): the wait line lives in a table. A waiting acquire() refused
-- once takes a ticket: a row of dblock_lock_waiters (name, ticket, owner, expiry in ms since
-- the epoch) renewed with the session's leases. A free or expired name is granted only to
-- the try whose line bound is at most the lowest live ticket of the name
-- (lock_acquire.sql). AUTOINCREMENT: a ticket number is never reused, so a new waiter never
-- gets a number below a live one.
CREATE TABLE IF NOT EXISTS dblock_lock_waiters (
  ticket     INTEGER PRIMARY KEY AUTOINCREMENT,
  name       TEXT    NOT NULL CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  owner      TEXT    NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dblock_lock_waiters_name ON dblock_lock_waiters (name, ticket);
CREATE INDEX IF NOT EXISTS dblock_lock_waiters_owner ON dblock_lock_waiters (owner);
