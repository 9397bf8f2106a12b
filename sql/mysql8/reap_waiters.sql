-- Reaper: deletes up to $2 wait-line tickets expired for longer than $1 ms (grace), oldest
-- ticket first. An expired ticket already stopped counting for grants; this keeps the
-- table small. The reaper's connection runs at READ COMMITTED (reaper_session.sql), so
-- InnoDB keeps no lock on the tickets it scans and leaves. A ticket renewed in time has
-- expires_at in the future and never matches. Rows affected = the number deleted.
DELETE FROM dblock_lock_waiters
 WHERE expires_at < UTC_TIMESTAMP(6) - INTERVAL (CAST($1 AS SIGNED) * 1000) MICROSECOND
 ORDER BY ticket
 LIMIT $2
