-- `dblock locks`: every lock row with its holder, holds, fence, expiry and ms left
-- (negative = expired, awaiting takeover or the reaper) and the holder's lock delay (the
-- lease ended at expires_at - lock_delay_ms). Owner tokens are not shown.
SELECT name, holder, holds, fence,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint), lock_delay_ms
  FROM dblock_locks ORDER BY name
