-- dblock schema 0018: on MariaDB and MySQL 8.0 this step lets the head of a wait line hold a
-- handed lease lock without a confirming write: the release holds a server lock (GET_LOCK)
-- until its commit has returned, and the head waits for that lock instead
-- (migrations/mysql/0018_lock_hand_off_server_lock.sql). This dialect needs no change; the
-- step exists so that every dialect keeps the same numbered schema steps.
SELECT 1;
