-- The current row of lease lock $1: holder text, fence, expiry (UTC text), ms left, holds
-- and the holder's lock delay.
SELECT holder, fence,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint), holds, lock_delay_ms
  FROM dblock_locks WHERE name = $1
