-- dblock schema 0009 (MariaDB/MySQL): leader election. A leader is the holder of the
-- election's lease row in dblock_locks; its value (an address, an id) is kept here, one row
-- per election name, tagged with the fence of the grant that wrote it. A value counts only
-- while the lock row carries the same fence (elect_leader.sql joins on it), so a value left
-- behind by a crashed leader is never shown as a later leader's; the next leader overwrites it.
CREATE TABLE IF NOT EXISTS dblock_elections (
  name       VARBINARY(255)  NOT NULL PRIMARY KEY,
  fence      BIGINT          NOT NULL,
  owner      CHAR(32)        CHARACTER SET ascii NOT NULL,
  value      VARBINARY(4096) NOT NULL,
  updated_at DATETIME(6)     NOT NULL,
  CHECK (LENGTH(name) >= 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
