-- dblock schema 0001 (SQLite): the lease-lock table and the fencing counter.
-- Times are INTEGER milliseconds since the Unix epoch from SQLite's own clock
-- (julianday('now')), never from the client.

-- SQLite has no sequence: one counter row, advanced by triggers whenever a grant
-- takes a new fence. Writers are serialized, so read-then-advance is atomic.
CREATE TABLE IF NOT EXISTS dblock_fence (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  last INTEGER NOT NULL
);
INSERT OR IGNORE INTO dblock_fence (id, last) VALUES (1, 0);

CREATE TABLE IF NOT EXISTS dblock_locks (
  name        TEXT    NOT NULL PRIMARY KEY CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  owner       TEXT    NOT NULL,
  holds       INTEGER NOT NULL CHECK (holds > 0),
  fence       INTEGER NOT NULL,
  acquired_at INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  holder      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS dblock_locks_expires_at ON dblock_locks (expires_at);
CREATE INDEX IF NOT EXISTS dblock_locks_owner ON dblock_locks (owner);

CREATE TRIGGER IF NOT EXISTS dblock_fence_on_insert AFTER INSERT ON dblock_locks
BEGIN
  UPDATE dblock_fence SET last = NEW.fence WHERE id = 1 AND last < NEW.fence;
END;

CREATE TRIGGER IF NOT EXISTS dblock_fence_on_update AFTER UPDATE OF fence ON dblock_locks
BEGIN
  UPDATE dblock_fence SET last = NEW.fence WHERE id = 1 AND last < NEW.fence;
END;
