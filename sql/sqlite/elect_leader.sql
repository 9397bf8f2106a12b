-- Leader election: the current leader of election $1 - the live grant of lock $1 (its lease
-- not ended: expires_at minus the lock delay, by SQLite's clock) and the value stored for
-- that same grant. No row = no leader.
-- Columns: value, fence, holder, expires_in_ms (to the lease's end).
SELECT e.value, l.fence, l.holder,
       l.expires_at - l.lock_delay_ms - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM dblock_locks l
  JOIN dblock_elections e ON e.name = l.name AND e.fence = l.fence
 WHERE l.name = $1
   AND l.expires_at - l.lock_delay_ms > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
