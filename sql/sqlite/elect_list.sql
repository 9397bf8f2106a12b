-- Leader election: the current leader of every election (`dblock locks`) - each live lock
-- grant (its lease not ended: expires_at minus the lock delay, by SQLite's clock) joined with
-- the value stored for that same grant, as elect_leader.sql reads one.
-- Columns: name, value, fence, holder, expires_in_ms (to the lease's end).
SELECT l.name, e.value, l.fence, l.holder,
       l.expires_at - l.lock_delay_ms - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM dblock_locks l
  JOIN dblock_elections e ON e.name = l.name AND e.fence = l.fence
 WHERE l.expires_at - l.lock_delay_ms > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 ORDER BY l.name
