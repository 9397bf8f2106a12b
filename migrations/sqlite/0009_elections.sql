-- dblock schema 0009 (SQLite): leader election. A leader is the holder of the election's
-- lease row in dblock_locks; its value (an address, an id) is kept here, one row per
-- election name, tagged with the fence of the grant that wrote it. A value counts only while
-- the lock row carries the same fence (elect_leader.sql joins on it), so a value left behind
-- by a crashed leader is never shown as a later leader's; the next leader overwrites it.
-- Times are ms since the epoch, as in dblock_locks.
CREATE TABLE IF NOT EXISTS dblock_elections (
  name       TEXT    NOT NULL PRIMARY KEY CHECK (length(CAST(name AS BLOB)) BETWEEN 1 AND 255),
  fence      INTEGER NOT NULL,
  owner      TEXT    NOT NULL,
  value      TEXT    NOT NULL CHECK (length(CAST(value AS BLOB)) <= 4096),
  updated_at INTEGER NOT NULL
);
