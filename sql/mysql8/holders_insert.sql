-- Inside a grant's transaction: a new hold of name $1 for owner $2: slot $3 (0 for a
-- read-write lock, 1..permits for a semaphore permit), kind $4 ('r' or 's'), write holds $5,
-- permit count $6, fence $7, lease + lock delay $8 ms, holder text $9, lock delay $10 ms.
INSERT INTO dblock_lock_holders (name, owner, slot, kind, holds, write_holds, permits, fence, acquired_at,
                                 expires_at, holder, lock_delay_ms)
VALUES ($1, $2, CAST($3 AS SIGNED), $4, 1, CAST($5 AS SIGNED), CAST($6 AS SIGNED), CAST($7 AS SIGNED), UTC_TIMESTAMP(6), UTC_TIMESTAMP(6) + INTERVAL (CAST($8 AS SIGNED) * 1000) MICROSECOND, $9, CAST($10 AS SIGNED))
