-- `dblock locks`: every live hold of a read-write lock or semaphore: name, kind ('r' or 's'),
-- slot, holder, holds, write_holds, permits, fence, expires_at (UTC text), ms left, lock delay.
-- Owner tokens are not shown.
SELECT name, kind, slot, holder, holds, write_holds, permits, fence, DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'), CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), lock_delay_ms
  FROM dblock_lock_holders
 WHERE expires_at > UTC_TIMESTAMP(6)
 ORDER BY name, slot, fence
