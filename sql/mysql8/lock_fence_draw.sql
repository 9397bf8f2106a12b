-- After lock_acquire.sql: advances the fence counter by one when lease lock $1 is owner $2's
-- with no fence drawn yet (a new grant), and keeps the new value as this connection's
-- LAST_INSERT_ID() for lock_fence_set.sql. LAST_INSERT_ID(expr) makes the increment and the
-- read one statement: no other connection can draw the same value. The counter is an
-- ordinary InnoDB row (replicated like the lock rows, on Galera too: no sequence cache, no
-- auto-increment offsets), and its row lock orders concurrent draws.
-- 1 row matched = drawn; 0 = nothing to draw (a re-entry, a refusal).
UPDATE dblock_fence_counter SET value = LAST_INSERT_ID(value + 1)
 WHERE id = 1
   AND EXISTS (SELECT 1 FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = 0)
