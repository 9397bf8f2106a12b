-- Inside a grant's transaction, under the name's grant lock: a new fence (the WAL timeline
-- times 2^40 plus the next dblock_fence_seq value, migration 0007), larger than every fence
-- handed out before, lease locks' included.
SELECT dblock_next_fence()
