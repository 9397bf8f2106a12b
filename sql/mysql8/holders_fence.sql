-- Inside a grant's transaction, under the name's gate: advances the fence counter (the one
-- of the lease locks) and keeps the new value as this connection's LAST_INSERT_ID(), read by
-- holders_fence_read.sql. The counter row's lock orders concurrent draws.
UPDATE dblock_fence_counter SET value = LAST_INSERT_ID(value + 1) WHERE id = 1
