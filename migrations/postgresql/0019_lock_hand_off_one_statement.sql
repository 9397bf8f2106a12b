-- dblock schema 0019: on SQLite this step lets a release hand a contended lease lock on in one
-- statement, a trigger deleting the handed ticket (migrations/sqlite/0019_lock_hand_off_one_statement.sql).
-- This dialect's release is one statement already (lock_release_to_line.sql); the step exists
-- so that every dialect keeps the same numbered schema steps.
SELECT 1;
