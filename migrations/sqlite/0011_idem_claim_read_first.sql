-- dblock schema 0011: on PostgreSQL this step makes the idempotency claim read before it
-- writes (migrations/postgresql/0011_idem_claim_read_first.sql), and on MariaDB and MySQL 8.0 it
-- creates the claim's stored function (migrations/mysql8/0011_idem_claim_read_first.sql).
-- SQLite already reads first (sql/sqlite/idem_peek.sql, in process); the step exists so that
-- every dialect keeps the same numbered schema steps.
SELECT 1;
