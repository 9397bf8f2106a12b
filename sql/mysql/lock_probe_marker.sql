-- lock_probe.sql with the holder's liveness marker: the row of lease lock $1 only if
-- another owner than $2 holds it live (granted (0), fence, holds, holder, expires_at_ms,
-- expires_in_ms, as lock_probe.sql), then
--   backed: 0, or when the holder's owner token starts with 'm' (its session holds a
--           marker), 1 + the token's second character as a digit (its window code),
--   gone:   1 when that marker, the user lock 'dblock:o:<owner>', is free: the connection
--           that held it has ended. IS_USED_LOCK only reads; a consistent read of the row.
SELECT 0 AS granted, fence, holds, holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) AS expires_at_ms,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms,
       IF(LEFT(owner, 1) = 'm', ASCII(SUBSTRING(owner, 2, 1)) - 47, 0) AS backed,
       IF(LEFT(owner, 1) = 'm' AND IS_USED_LOCK(CONCAT('dblock:o:', owner)) IS NULL, 1, 0) AS gone
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > UTC_TIMESTAMP(6)
