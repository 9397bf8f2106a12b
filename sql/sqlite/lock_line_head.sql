-- Inside the final release that hands lease lock $1 on (lock_hand_off.sql; BEGIN IMMEDIATE
-- holds the database's write lock, so nothing changes in between): the head of its wait
-- line, the lowest live ticket, with the grant it asked for (lock_line_join.sql).
-- Columns: ticket, owner, grant_ttl_ms (0: not a lease lock's waiter), holder, lock_delay_ms.
SELECT ticket, owner, grant_ttl_ms, holder, lock_delay_ms
  FROM dblock_lock_waiters
 WHERE name = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 ORDER BY ticket LIMIT 1
