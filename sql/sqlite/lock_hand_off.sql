-- The final release of lease lock $1 by owner $2, grant $3 (its fence), that hands the name
-- to the head of its wait line, in one statement: the lowest live ticket of the name becomes
-- the grant it asked for (lock_line_join.sql) - its owner, holds 1, the next fence (the
-- trigger dblock_fence_on_update advances the counter), expiry now + its grant_ttl_ms, its
-- holder and lock delay, and its ticket, which the trigger dblock_lock_hand_off_takes_ticket
-- (migration 0019) then deletes. A head whose grant_ttl_ms is 0 (a read-write lock's or a
-- semaphore's waiter) is never handed a lease row. Returns the new fence and the head's owner
-- and ticket. No row: nobody to hand it to, or the row is no longer this grant; the caller then
-- sends lock_release.sql, whose change count tells which.
UPDATE dblock_locks
   SET owner = w.owner, holds = 1, fence = (SELECT last + 1 FROM dblock_fence WHERE id = 1),
       acquired_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + w.grant_ttl_ms,
       holder = w.holder, lock_delay_ms = w.lock_delay_ms, ticket = w.ticket
  FROM (SELECT ticket, owner, grant_ttl_ms, holder, lock_delay_ms
          FROM dblock_lock_waiters
         WHERE name = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
         ORDER BY ticket LIMIT 1) AS w
 WHERE dblock_locks.name = $1 AND dblock_locks.owner = $2 AND dblock_locks.fence = $3
   AND w.grant_ttl_ms > 0
RETURNING fence, owner, ticket
