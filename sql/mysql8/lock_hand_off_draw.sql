-- Inside the final release that hands lease lock on (lock_hand_off.sql), before its row is
-- rewritten: draws the new grant's fence from the fence counter into LAST_INSERT_ID() (no
-- sequences on MySQL 8.0). Drawn while the releasing grant is live: no other grant of the
-- name can come between the draw and the rewrite, and a rewrite that finds the row gone rolls
-- the draw back with it.
UPDATE dblock_fence_counter SET value = LAST_INSERT_ID(value + 1) WHERE id = 1
