-- dblock schema 0013: on MySQL 8.0 this step creates the stored function that grants a lease
-- lock in one statement (migrations/mysql8/0013_lock_grant_one_statement.sql). This dialect's
-- acquire is one statement already; the step exists so that every dialect keeps the same
-- numbered schema steps.
SELECT 1;
