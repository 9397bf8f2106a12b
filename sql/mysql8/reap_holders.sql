-- Reaper: deletes up to $2 read-write lock and semaphore holds expired for longer than $1
-- ms (grace), oldest first, through the expires_at index, at READ COMMITTED (reaper_session.sql:
-- no gap locks). A hold renewed in time has expires_at in the future and never matches.
-- Rows affected = the number deleted.
DELETE FROM dblock_lock_holders
 WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL (CAST($1 AS SIGNED) * 1000) MICROSECOND
 ORDER BY expires_at
 LIMIT $2
