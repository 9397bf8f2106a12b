-- `dblock locks`: every live hold of a read-write lock or semaphore: name, kind ('r' or 's'),
-- slot, holder, holds, write_holds, permits, fence, expires_at (UTC text), ms left, lock delay.
-- Owner tokens are not shown.
SELECT name, kind, slot, holder, holds, write_holds, permits, fence, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint), lock_delay_ms
  FROM dblock_lock_holders
 WHERE expires_at > now()
 ORDER BY name, slot, fence
