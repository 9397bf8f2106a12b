-- dblock schema 0001 (MySQL 8.0): the lease-lock table and the fence counter.
-- Times are DATETIME(6) in UTC from UTC_TIMESTAMP(6): the server's clock only.
-- Names are VARBINARY so that 'Job' and 'job' are different locks (no collation folding).
-- Fences come from one row of dblock_fence_counter, advanced by
-- UPDATE ... SET value = LAST_INSERT_ID(value + 1) (sql/mysql8/lock_fence_draw.sql): an
-- ordinary InnoDB row, durable across restarts and replicated like the lock rows (on Galera
-- too, where auto-increment offsets would hand out values out of order). CHECK constraints
-- are enforced from MySQL 8.0.16 (parsed and ignored before).

CREATE TABLE IF NOT EXISTS dblock_fence_counter (
  id    TINYINT NOT NULL PRIMARY KEY,
  value BIGINT  NOT NULL,
  CHECK (id = 1),
  CHECK (value >= 0)
) ENGINE=InnoDB;

INSERT INTO dblock_fence_counter (id, value)
SELECT 1, 0 FROM DUAL WHERE NOT EXISTS (SELECT 1 FROM dblock_fence_counter WHERE id = 1);

CREATE TABLE IF NOT EXISTS dblock_locks (
  name        VARBINARY(255) NOT NULL PRIMARY KEY,
  owner       CHAR(32)       CHARACTER SET ascii NOT NULL,
  holds       INT            NOT NULL CHECK (holds > 0),
  fence       BIGINT         NOT NULL,
  acquired_at DATETIME(6)    NOT NULL,
  expires_at  DATETIME(6)    NOT NULL,
  holder      VARCHAR(255)   NOT NULL DEFAULT '',
  CHECK (LENGTH(name) >= 1),
  KEY dblock_locks_expires_at (expires_at),
  KEY dblock_locks_owner (owner)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
