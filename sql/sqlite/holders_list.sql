-- `dblock locks`: every live hold of a read-write lock or semaphore: name, kind ('r' or 's'),
-- slot, holder, holds, write_holds, permits, fence, expires_at (UTC text), ms left, lock delay.
-- Owner tokens are not shown.
SELECT name, kind, slot, holder, holds, write_holds, permits, fence, strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch'), expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), lock_delay_ms
  FROM dblock_lock_holders
 WHERE expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 ORDER BY name, slot, fence
