-- The whole grant of a read-write lock in one statement (autocommit; the function of
-- migration 0010 runs gate, takeover, read, wait line, fence and write): name $1, owner $2,
-- $3 = 1 for a write hold, $4 the fence of the session's own live hold (0 without one),
-- $5 the waiter's ticket (0 without one), $6 the wait-line bound, lease + lock delay $7 ms,
-- holder text $8, lock delay $9 ms. One text: the outcome and its values (see the migration).
SELECT dblock_holders_acquire_rw($1, $2, CAST($3 AS integer), CAST($4 AS bigint), CAST($5 AS bigint), CAST($6 AS bigint), CAST($7 AS bigint), $8, CAST($9 AS bigint))
