-- A waiter read that a release handed it lease lock $1 (owner $2, ticket $3; lock_handed.sql)
-- and confirms it with a write before it acts: InnoDB shows a commit to other transactions
-- before its redo log is flushed (with the binary log off), so the handed grant the waiter
-- read may not be durable yet, and a crash then would take it back while the waiter holds.
-- This write's own commit waits for its flush, and the log is flushed in order: once it
-- returns, the hand-off is durable too. acquired_at moves to now (at least 1 us, so the row
-- changes and the commit writes redo). 0 rows affected = the grant is gone (expired, taken
-- over): not granted.
UPDATE dblock_locks SET acquired_at = GREATEST(UTC_TIMESTAMP(6), acquired_at + INTERVAL 1 MICROSECOND)
 WHERE name = $1 AND owner = $2 AND ticket = CAST($3 AS SIGNED) AND expires_at > UTC_TIMESTAMP(6)
