-- Inside the final release that hands lease lock $1 on (lock_hand_off.sql): the head of its
-- wait line, the lowest live ticket, with the grant it asked for (lock_line_join.sql). FOR
-- UPDATE locks it until the release commits: a waiter deleting its ticket at that moment
-- (its wait ended) waits, then finds it gone and gives the handed row back
-- (lock_drop_handed.sql); a ticket is either handed a grant or deleted by its waiter. Taken
-- before the lock row, in the order a grant reads the line and then writes the row.
-- Columns: ticket, owner, grant_ttl_ms (0: not a lease lock's waiter), holder, lock_delay_ms.
SELECT ticket, owner, grant_ttl_ms, holder, lock_delay_ms
  FROM dblock_lock_waiters
 WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6)
 ORDER BY ticket LIMIT 1
   FOR UPDATE
