-- Crash detection for read-write locks and semaphores: every live hold of name $1 (rows of
-- dblock_lock_holders) of owners other than $2, lowest slot first, with the holder's
-- liveness marker, as lock_probe_marker.sql reads it for a lease lock.
-- Columns: owner, slot, fence, holds, write_holds, holder, expires_at_ms, expires_in_ms, then
--   backed: 0, or when the hold's owner token starts with 'm' (its session holds a
--           marker), 1 + the token's second character as a digit (its window code),
--   gone:   1 when that marker, the user lock 'dblock:o:<owner>', is free: the connection
--           that held it has ended. IS_USED_LOCK only reads; a consistent read of the rows.
SELECT owner, slot, fence, holds, write_holds, holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) AS expires_at_ms,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms,
       IF(LEFT(owner, 1) = 'm', ASCII(SUBSTRING(owner, 2, 1)) - 47, 0) AS backed,
       IF(LEFT(owner, 1) = 'm' AND IS_USED_LOCK(CONCAT('dblock:o:', owner)) IS NULL, 1, 0) AS gone
  FROM dblock_lock_holders
 WHERE name = $1 AND owner <> $2 AND expires_at > UTC_TIMESTAMP(6)
 ORDER BY slot, owner
