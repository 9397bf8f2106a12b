-- The final release of lease lock $1 by owner $2, grant $3 (its fence), that hands the name
-- to the head of its wait line, read and locked by lock_line_head.sql in the same
-- transaction: the row becomes the grant that ticket asked for - owner $4, holds 1, a new
-- fence, expiry now + $5 ms, holder $6, lock delay $7 ms, ticket $8 - and the caller then
-- deletes the ticket (lock_line_leave.sql). 0 rows affected = the row was no longer this
-- grant: the caller rolls back. The fence is drawn where the row is ours and locked, as in
-- lock_acquire.sql, so fences of one name keep increasing in grant order.
UPDATE dblock_locks
   SET owner = $4, holds = 1, fence = NEXTVAL(dblock_fence_seq), acquired_at = UTC_TIMESTAMP(6),
       expires_at = UTC_TIMESTAMP(6) + INTERVAL (CAST($5 AS SIGNED) * 1000) MICROSECOND,
       holder = $6, lock_delay_ms = $7, ticket = CAST($8 AS SIGNED)
 WHERE name = $1 AND owner = $2 AND fence = CAST($3 AS SIGNED)
