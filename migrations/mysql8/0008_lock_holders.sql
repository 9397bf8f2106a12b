-- dblock schema 0008 (MySQL 8.0 syntax; MariaDB accepts it too): read-write locks and counting semaphores. Their holds live
-- in dblock_lock_holders, one row per hold, each a lease of its own (owner, fence, expiry):
--   kind 'r': a read-write lock; one row per owner (slot 0), holds = every hold of that
--             owner, write_holds = how many of them are write holds (> 0: the writer);
--   kind 's': a semaphore; one row per permit, in slots 1..permits, permits = the count N
--             chosen by the first acquirer while no permit of the name is held.
-- Rows are renewed by the session's one renewal statement together with its lease locks,
-- deleted at release, taken over after expiry (+ lock delay) and reaped like lock rows.
-- Grants of one name are serialized by the row of the name in dblock_lock_gates, locked by
-- the grant's transaction (a row, replicated like the rest: no GET_LOCK, which is node-local
-- on Galera). A gate row stays after its name's holds are gone (one small row per name).
CREATE TABLE IF NOT EXISTS dblock_lock_holders (
  name          VARBINARY(255) NOT NULL,
  owner         CHAR(32)       CHARACTER SET ascii NOT NULL,
  slot          INT            NOT NULL,
  kind          CHAR(1)        CHARACTER SET ascii NOT NULL,
  holds         INT            NOT NULL,
  write_holds   INT            NOT NULL DEFAULT 0,
  permits       INT            NOT NULL DEFAULT 0,
  fence         BIGINT         NOT NULL,
  acquired_at   DATETIME(6)    NOT NULL,
  expires_at    DATETIME(6)    NOT NULL,
  holder        VARCHAR(255)   NOT NULL DEFAULT '',
  lock_delay_ms BIGINT         NOT NULL DEFAULT 0,
  PRIMARY KEY (name, slot, owner),
  KEY dblock_lock_holders_expires_at (expires_at),
  KEY dblock_lock_holders_owner (owner),
  CHECK (LENGTH(name) >= 1 AND slot >= 0 AND kind IN ('r', 's') AND holds > 0 AND write_holds >= 0
         AND permits >= 0 AND lock_delay_ms >= 0)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
CREATE TABLE IF NOT EXISTS dblock_lock_gates (
  name VARBINARY(255) NOT NULL PRIMARY KEY
) ENGINE=InnoDB;
