-- `dblock locks`: every lock row with its holder, holds, fence, expiry and ms left
-- (negative = expired) and the holder's lock delay (the lease ended at
-- expires_at - lock_delay_ms). Owner tokens are not shown.
SELECT name, holder, holds, fence, DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'),
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), lock_delay_ms
  FROM dblock_locks ORDER BY name
