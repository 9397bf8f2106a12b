-- A waiter read that a release handed it lease lock $1 under the releaser's server lock
-- (lock_handed.sql answered locked 1): instead of the confirming write, it waits up to 20 ms
-- for that server lock and frees it at once. The releaser frees the lock only after its
-- release's answer arrived, that is after the hand-off's commit returned with its redo flushed;
-- so got 1 means the grant the waiter read is durable. got 0 (the wait ran out: a releaser
-- paused or slow to free it) or NULL: the waiter confirms with lock_handed_confirm.sql.
SELECT GET_LOCK(CONCAT('dblock:h:', SHA1($1)), 0.02) AS got,
       RELEASE_LOCK(CONCAT('dblock:h:', SHA1($1))) AS freed
