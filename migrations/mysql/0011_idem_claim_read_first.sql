-- dblock schema 0011: on MySQL 8.0 this step creates the idempotency claim's stored function,
-- which reads before it writes (migrations/mysql8/0011_idem_claim_read_first.sql). MariaDB
-- keeps its one-statement claim, INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING
-- (sql/mysql/idem_claim.sql): the same stored function measured slower on MariaDB than that
-- statement, for a replay and for a new key. The step exists so that every dialect keeps the
-- same numbered schema steps. DO evaluates an expression and changes nothing.
DO 0;
