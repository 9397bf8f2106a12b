-- Read-only retry of a refused acquire of lease lock $1 by owner $2 (sent instead of
-- lock_acquire.sql while this session last saw another owner hold the name live, the
-- holder's expiry has not passed and no release of the name was seen since): the row
-- only if another owner still holds it live. Columns as lock_acquire.sql's, granted = 0.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A consistent
-- (non-locking) read: unlike a refused INSERT ... ON DUPLICATE KEY UPDATE it does not
-- X-lock the holder's row, so the holder's renewal and release never queue behind it.
SELECT 0 AS granted, fence, holds, holder,
       DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS expires_at,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > UTC_TIMESTAMP(6)
