-- After lock_fence_draw.sql drew a value: gives it to the new grant of lease lock $1 by
-- owner $2 (the row with no fence yet). LAST_INSERT_ID() is this connection's own, unchanged
-- by other connections' draws.
UPDATE dblock_locks SET fence = LAST_INSERT_ID() WHERE name = $1 AND owner = $2 AND fence = 0
