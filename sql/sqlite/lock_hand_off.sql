-- The final release of lease lock $1 by owner $2, grant $3 (its fence), that hands the name
-- to the head of its wait line, read by lock_line_head.sql in the same transaction: the row
-- becomes the grant that ticket asked for - owner $4, holds 1, the next fence (the trigger
-- dblock_fence_on_update advances the counter), expiry now + $5 ms, holder $6, lock delay
-- $7 ms, ticket $8 - and the caller then deletes the ticket (lock_line_leave.sql). Returns
-- the new fence; no row = the row was no longer this grant: the caller rolls back.
UPDATE dblock_locks
   SET owner = $4, holds = 1, fence = (SELECT last + 1 FROM dblock_fence WHERE id = 1),
       acquired_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $5,
       holder = $6, lock_delay_ms = $7, ticket = $8
 WHERE name = $1 AND owner = $2 AND fence = $3
RETURNING fence
