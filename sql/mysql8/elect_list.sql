-- Leader election: the current leader of every election (`dblock locks`) - each live lock
-- grant (its lease not ended: expires_at minus the lock delay, by the server's clock) joined
-- with the value stored for that same grant, as elect_leader.sql reads one.
-- Columns: name, value, fence, holder, expires_in_ms (to the lease's end).
SELECT l.name, e.value, l.fence, l.holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
                          l.expires_at - INTERVAL (l.lock_delay_ms * 1000) MICROSECOND) DIV 1000 AS SIGNED)
  FROM dblock_locks l
  JOIN dblock_elections e ON e.name = l.name AND e.fence = l.fence
 WHERE l.expires_at - INTERVAL (l.lock_delay_ms * 1000) MICROSECOND > UTC_TIMESTAMP(6)
 ORDER BY l.name
