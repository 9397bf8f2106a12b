-- dblock schema 0008 (SQLite): read-write locks and counting semaphores. Their holds live
-- in dblock_lock_holders, one row per hold, each a lease of its own (owner, fence, expiry):
--   kind 'r': a read-write lock; one row per owner (slot 0), holds = every hold of that
--             owner, write_holds = how many of them are write holds (> 0: the writer);
--   kind 's': a semaphore; one row per permit, in slots 1..permits, permits = the count N
--             chosen by the first acquirer while no permit of the name is held.
-- Rows are renewed by the session's renewal together with its lease locks, deleted at
-- release, taken over after expiry (+ lock delay) and reaped like lock rows. Grants are
-- serialized by SQLite's single writer (BEGIN IMMEDIATE). Times are ms since the epoch.
CREATE TABLE IF NOT EXISTS dblock_lock_holders (
  name          TEXT    NOT NULL CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  owner         TEXT    NOT NULL,
  slot          INTEGER NOT NULL CHECK (slot >= 0),
  kind          TEXT    NOT NULL CHECK (kind IN ('r', 's')),
  holds         INTEGER NOT NULL CHECK (holds > 0),
  write_holds   INTEGER NOT NULL DEFAULT 0 CHECK (write_holds >= 0),
  permits       INTEGER NOT NULL DEFAULT 0 CHECK (permits >= 0),
  fence         INTEGER NOT NULL,
  acquired_at   INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  holder        TEXT    NOT NULL DEFAULT '',
  lock_delay_ms INTEGER NOT NULL DEFAULT 0 CHECK (lock_delay_ms >= 0),
  PRIMARY KEY (name, slot, owner)
);
CREATE INDEX IF NOT EXISTS dblock_lock_holders_expires_at ON dblock_lock_holders (expires_at);
CREATE INDEX IF NOT EXISTS dblock_lock_holders_owner ON dblock_lock_holders (owner);
