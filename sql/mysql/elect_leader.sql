-- Leader election: the current leader of election $1 - the live grant of lock $1 (its lease
-- not ended: expires_at minus the lock delay, by the server's clock) and the value stored for
-- that same grant. No row = no leader (none, its lease ended, or a new leader between its
-- grant and its value, one round trip).
-- Columns: value, fence, holder, expires_in_ms (to the lease's end).
SELECT e.value, l.fence, l.holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6),
                          l.expires_at - INTERVAL (l.lock_delay_ms * 1000) MICROSECOND) DIV 1000 AS SIGNED)
  FROM dblock_locks l
  JOIN dblock_elections e ON e.name = l.name AND e.fence = l.fence
 WHERE l.name = $1 AND l.expires_at - INTERVAL (l.lock_delay_ms * 1000) MICROSECOND > UTC_TIMESTAMP(6)
