-- Inside a grant's transaction: a new fence, one above the counter shared with the lease
-- locks (dblock_fence), which advances with it.
UPDATE dblock_fence SET last = last + 1 WHERE id = 1 RETURNING last
