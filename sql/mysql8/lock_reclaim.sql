-- Crash detection: ends the lease of grant $2 (fence) of lock $1 at once, for owner $3,
-- when its holder's liveness marker (the user lock 'dblock:o:<owner>') is free: the
-- connection that held it has ended. The caller sends it only after it saw the marker free
-- at least the liveness grace earlier for the same fence, and then sends lock_acquire.sql,
-- which takes the expired row over with a new fence (the line bound applies as always). No
-- lock delay: the holder's own process told it the lease was lost before the grace ran out
-- (docs/locks.md, "Crash detection"). One row matched (CLIENT_FOUND_ROWS): reclaimed.
UPDATE dblock_locks
   SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 MICROSECOND
 WHERE name = $1 AND fence = CAST($2 AS SIGNED) AND owner <> $3
   AND expires_at > UTC_TIMESTAMP(6)
   AND LEFT(owner, 1) = 'm' AND IS_USED_LOCK(CONCAT('dblock:o:', owner)) IS NULL
