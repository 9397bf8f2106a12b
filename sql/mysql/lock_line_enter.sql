-- Wait line of lease lock $1 (session_options::fair): GET_LOCK on a user lock named
-- 'dbq:' + the first 60 hex digits of SHA-256(database/name) (64 characters, the server's
-- limit; apart from session locks, whose names are database/name or a full 64-digit
-- hash), waiting up to $2 ms. 1 = this connection is at the head of the line, 0 = timed
-- out. Waiters of one user lock are granted in arrival order by the metadata lock
-- manager; the lock is released by lock_line_leave.sql or when the connection ends.
-- Exclusion and fencing stay with the lock row: the line only orders who tries.
SELECT GET_LOCK(CONCAT('dbq:', LEFT(SHA2(CONCAT(DATABASE(), '/', $1), 256), 60)), $2 / 1000) AS entered
