-- dblock schema 0011: on PostgreSQL this step makes the idempotency claim read before it
-- writes (migrations/postgresql/0011_idem_claim_read_first.sql), and on MySQL 8.0 it creates
-- the claim's stored function (migrations/mysql8/0011_idem_claim_read_first.sql). MariaDB keeps
-- its one-statement claim, INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING
-- (sql/mysql/idem_claim.sql): the same stored function measured slower on MariaDB for a new key
-- and for a replay than that statement. The step exists so that every dialect keeps the same
-- numbered schema steps. DO evaluates an expression and changes nothing.
DO 0;
