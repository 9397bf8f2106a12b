-- Wait line of lease lock $1 (session_options::fair): blocks until this connection holds
-- the session-level advisory lock on the two-int key (class 'dblq' = 1684171889,
-- hashtext(name)), or fails with SQLSTATE 55P03 after $2 ms. PostgreSQL's lock manager
-- grants waiters of one key first come, first served, so the connection that holds the
-- key is the head of the line: the only waiter of this process set that polls the lock
-- row. The key is released by lock_line_leave.sql or when the connection ends (a killed
-- waiter leaves the line at once). Exclusion and fencing stay with the lock row: the line
-- only orders who tries. Class 'dblk' (1684171883) is the grant lock of
-- dblock_lock_acquire, and one-bigint keys are session locks and applications': no overlap.
-- Select-list items run left to right, so the lock_timeout is set before the wait starts;
-- it stays set on this connection, which serves only the line. The void result is cast to
-- text (an empty string) for client libraries that cannot read void (SOCI).
SELECT set_config('lock_timeout', CAST($2 AS text), false) AS lock_timeout,
       CAST(pg_advisory_lock(1684171889, hashtext(CAST($1 AS text))) AS text) AS entered
