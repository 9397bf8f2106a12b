-- dblock schema 0001 (MySQL/MariaDB 10.6+): the lease-lock table and the fencing sequence.
-- Times are DATETIME(6) in UTC from UTC_TIMESTAMP(6): the server's clock only.
-- Names are VARBINARY so that 'Job' and 'job' are different locks (no collation folding).
-- On MySQL 8 (no CREATE SEQUENCE) the sequence would be an AUTO_INCREMENT counter table.

CREATE SEQUENCE IF NOT EXISTS dblock_fence_seq
  START WITH 1 MINVALUE 1 INCREMENT BY 1 CACHE 1000 NOCYCLE ENGINE=InnoDB;

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
