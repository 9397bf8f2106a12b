-- Reaper: deletes up to $2 lock rows expired for longer than $1 ms (grace), oldest
-- first, through the expires_at index. The reaper's connection runs at READ COMMITTED
-- (reaper_session.sql), so InnoDB takes no gap locks: live rows and new inserts are not
-- blocked. A row renewed in time has expires_at in the future and never matches.
-- Rows affected = the number deleted.
DELETE FROM dblock_locks
 WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL (CAST($1 AS SIGNED) * 1000) MICROSECOND
 ORDER BY expires_at
 LIMIT $2
