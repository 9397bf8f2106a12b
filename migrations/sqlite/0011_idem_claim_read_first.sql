-- dblock schema 0011: on MySQL 8.0 this step creates the idempotency claim's stored function,
-- which reads before it writes (migrations/mysql8/0011_idem_claim_read_first.sql). SQLite
-- already reads first (sql/sqlite/idem_peek.sql, in process); the step exists so that every
-- dialect keeps the same numbered schema steps.
SELECT 1;
