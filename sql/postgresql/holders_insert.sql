-- Inside a grant's transaction: a new hold of name $1 for owner $2: slot $3 (0 for a
-- read-write lock, 1..permits for a semaphore permit), kind $4 ('r' or 's'), write holds $5,
-- permit count $6, fence $7, lease + lock delay $8 ms, holder text $9, lock delay $10 ms.
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                 expires_at, holder, lock_delay_ms)
VALUES ($1, $2, CAST($3 AS bigint), $4, 1, CAST($5 AS bigint), CAST($6 AS bigint), CAST($7 AS bigint), now(), now() + CAST($8 AS bigint) * interval '1 millisecond', $9, CAST($10 AS bigint))
