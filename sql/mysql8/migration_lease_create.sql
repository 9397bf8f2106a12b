-- The migration lock on a Galera cluster, where GET_LOCK holds on one node only: one lease row
-- that every node's migrators contend for through replicated, certified writes. Created
-- before the lock is taken (idempotent DDL; Galera runs it in total order on every node).
CREATE TABLE IF NOT EXISTS dblock_migration_lease (
  id         TINYINT     NOT NULL PRIMARY KEY,
  owner      CHAR(32)    CHARACTER SET ascii NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  CHECK (id = 1)
) ENGINE=InnoDB
