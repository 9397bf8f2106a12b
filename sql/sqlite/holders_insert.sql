-- Inside a grant's transaction: a new hold of name $1 for owner $2: slot $3 (0 for a
-- read-write lock, 1..permits for a semaphore permit), kind $4 ('r' or 's'), write holds $5,
-- permit count $6, fence $7, lease + lock delay $8 ms, holder text $9, lock delay $10 ms.
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                 expires_at, holder, lock_delay_ms)
VALUES ($1, $2, $3, $4, 1, $5, $6, $7, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $8, $9, $10)
