-- Inside a grant's transaction, under the name's gate: a new fence from dblock_fence_seq,
-- the sequence of the lease locks' fences too.
SELECT NEXTVAL(dblock_fence_seq)
