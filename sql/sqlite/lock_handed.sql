-- A waiter's try of lease lock $1 (owner $2, ticket $3) looks before it writes: the live row
-- that answers the try without the upsert. granted 1: the previous holder's release handed it
-- to this ticket (lock_hand_off.sql); granted 0: another owner holds it (the refusal, naming
-- the holder). No row: free, expired, or a row of $2 not handed to this ticket - the upsert
-- (lock_acquire.sql) decides. A read: no write lock, no fsync. Columns as lock_probe.sql:
-- granted, fence, holds, holder, expires_at_ms, expires_in_ms.
SELECT CASE WHEN owner = $2 THEN 1 ELSE 0 END AS granted, fence, holds, holder,
       expires_at AS expires_at_ms,
       expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND (owner <> $2 OR ticket = $3)
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
