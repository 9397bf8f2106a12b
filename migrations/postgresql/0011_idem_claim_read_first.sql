-- dblock schema 0011: on MySQL 8.0 this step creates the idempotency claim's stored function,
-- which reads before it writes (migrations/mysql8/0011_idem_claim_read_first.sql). PostgreSQL
-- keeps the claim function of migration 0003, which inserts first: a read first (or an
-- INSERT ... SELECT ... WHERE NOT EXISTS) made a replay cheaper but a new key dearer, and a new
-- key is the common case (docs/idempotency.md, "Cost"). The step exists so that every dialect
-- keeps the same numbered schema steps.
SELECT 1;
