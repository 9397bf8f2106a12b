-- Crash detection: ends hold (name $1, owner $2, slot $3, fence $4) of dblock_lock_holders
-- at once when its owner's liveness marker (the user lock 'dblock:o:<owner>') is free: the
-- connection that held it has ended. Sent inside a transaction after holders_gate.sql (a
-- grant deciding meanwhile never sees the row end under it), and only after the caller saw
-- the marker free at least the liveness grace earlier for the same hold and fence; the
-- waiter's next grant deletes the expired row (holders_clear.sql). No lock delay: the
-- holder's own process told it the hold was lost before the grace ran out (docs/locks.md,
-- "Crash detection"). One row matched (CLIENT_FOUND_ROWS): reclaimed.
UPDATE dblock_lock_holders
   SET expires_at = UTC_TIMESTAMP(6) - INTERVAL 1 MICROSECOND
 WHERE name = $1 AND owner = $2 AND slot = CAST($3 AS SIGNED) AND fence = CAST($4 AS SIGNED)
   AND expires_at > UTC_TIMESTAMP(6)
   AND LEFT(owner, 1) = 'm' AND IS_USED_LOCK(CONCAT('dblock:o:', owner)) IS NULL
