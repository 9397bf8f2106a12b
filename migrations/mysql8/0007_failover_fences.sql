-- dblock schema 0007: on PostgreSQL this step makes fences carry the server's WAL timeline,
-- so that they stay increasing across a promotion (migrations/postgresql/0007_failover_fences.sql).
-- MySQL 8.0 needs no schema change for it; the step exists so that every dialect keeps the same
-- numbered schema steps. DO evaluates an expression and changes nothing.
DO 0;
