-- The row of lease lock $1 as it is now (after lock_acquire.sql, and for the holder lookup):
-- granted = 1 when owner $2 holds it live; fence, holds, holder, expiry (text), ms left, then
-- the holder's lock delay.
SELECT IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
       DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'),
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), lock_delay_ms
  FROM dblock_locks WHERE name = $1
