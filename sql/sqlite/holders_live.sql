-- Inside a grant's transaction, after holders_clear.sql: every live hold of name $1 (a
-- read-write lock's owners, or a semaphore's permits), lowest slot first.
-- Columns: owner, slot, kind, holds, write_holds, permits, fence, holder, expires_at (UTC
-- text), expires_in_ms, lock_delay_ms.
SELECT owner, slot, kind, holds, write_holds, permits, fence, holder, strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch'), expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), lock_delay_ms
  FROM dblock_lock_holders
 WHERE name = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 ORDER BY slot, fence
