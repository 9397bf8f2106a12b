-- The whole grant of semaphore permits in one statement (autocommit; the function of
-- migration 0010 runs gate, takeover, read, wait line, fences and writes): name $1, owner
-- $2, permit count $3, permits wanted $4, the waiter's ticket $5 (0 without one), the
-- wait-line bound $6, lease + lock delay $7 ms, holder text $8, lock delay $9 ms. One text:
-- the outcome and its values (see the migration).
SELECT dblock_holders_acquire_permits($1, $2, CAST($3 AS integer), CAST($4 AS integer), CAST($5 AS bigint), CAST($6 AS bigint), CAST($7 AS bigint), $8, CAST($9 AS bigint))
