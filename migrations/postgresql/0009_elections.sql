-- dblock schema 0009 (PostgreSQL): leader election. A leader is the holder of the election's
-- lease row in dblock_locks; its value (an address, an id) is kept here, one row per
-- election name, tagged with the fence of the grant that wrote it. A value counts only while
-- the lock row carries the same fence (elect_leader.sql joins on it), so a value left behind
-- by a crashed leader is never shown as a later leader's; the next leader overwrites it.
CREATE TABLE IF NOT EXISTS dblock_elections (
  name       text        NOT NULL PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 255),
  fence      bigint      NOT NULL,
  owner      varchar(32) NOT NULL,
  value      text        NOT NULL CHECK (octet_length(value) <= 4096),
  updated_at timestamptz NOT NULL
);
