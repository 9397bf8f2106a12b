-- dblock schema 0004: on PostgreSQL this step lets the first try of a waiting acquire()
-- queue behind its name's wait line (migrations/postgresql/0004_acquire_behind_line.sql).
-- MySQL 8.0 needs no schema change for it; the step exists so that every dialect keeps the same
-- numbered schema steps. DO evaluates an expression and changes nothing.
DO 0;
