-- dblock schema 0003: on PostgreSQL this step creates the PL/pgSQL functions behind the lock
-- acquire and the idempotency claim (migrations/postgresql/0003_acquire_claim_functions.sql).
-- MySQL 8.0 needs no schema change for it; the step exists so that every dialect keeps the same
-- numbered schema steps. DO evaluates an expression and changes nothing.
DO 0;
