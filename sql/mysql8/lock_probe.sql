-- Read-only retry of a refused acquire of lease lock $1 by owner $2 (sent instead of
-- lock_acquire.sql while this session last saw another owner hold the name live, the
-- holder's expiry has not passed and no release of the name was seen since): the row
-- only if another owner still holds it live: granted (0), fence, holds, holder, the expiry
-- as UTC epoch milliseconds (formatted by the client: cheaper than formatting here) and
-- the milliseconds left.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A consistent
-- (non-locking) read: unlike a refused INSERT ... ON DUPLICATE KEY UPDATE it does not
-- X-lock the holder's row, so the holder's renewal and release never queue behind it.
SELECT 0 AS granted, fence, holds, holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) AS expires_at_ms,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > UTC_TIMESTAMP(6)
