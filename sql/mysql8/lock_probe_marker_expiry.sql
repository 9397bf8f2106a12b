-- lock_probe_marker.sql for a try that reports no holder (try_acquire): the row of lease
-- lock $1 only if another owner than $2 holds it live, with only what the caller decides
-- from: fence (a takeover of a gone holder names the grant), expires_in_ms, owner (the
-- client reads the marker flag and window code from the token: 'm' and one digit), and
--   gone: 1 when the user lock 'dblock:o:<owner>' is free (meaningful for a marker-backed
--         owner only; the client ignores it for others).
-- No holder text, no hold count, no formatted expiry, and the marker flag is not computed
-- here: fewer columns and expressions. IS_USED_LOCK only reads; a consistent read of the row.
SELECT fence,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms,
       owner,
       IS_USED_LOCK(CONCAT('dblock:o:', owner)) IS NULL AS gone
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > UTC_TIMESTAMP(6)
