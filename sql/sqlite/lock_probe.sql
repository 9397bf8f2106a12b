-- Read-only retry of a refused acquire of lease lock $1 by owner $2 (sent instead of
-- lock_acquire.sql while this session last saw another owner hold the name live, the
-- holder's expiry has not passed and no release of the name was seen since): the row
-- only if another owner still holds it live: granted (0), fence, holds, holder, the expiry
-- as UTC epoch milliseconds (formatted by the client: cheaper than formatting here) and
-- the milliseconds left.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A read: it
-- does not take the database's write lock, which a refused upsert does.
SELECT 0 AS granted, fence, holds, holder,
       expires_at AS expires_at_ms,
       expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
