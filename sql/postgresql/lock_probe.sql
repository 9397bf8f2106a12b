-- Read-only retry of a refused acquire of lease lock $1 by owner $2 (sent instead of
-- lock_acquire.sql while this session last saw another owner hold the name live, the
-- holder's expiry has not passed and no release of the name was seen since): the row
-- only if another owner still holds it live: granted (0), fence, holds, holder, the expiry
-- as UTC epoch milliseconds (formatted by the client: cheaper than formatting here) and
-- the milliseconds left.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A plain
-- primary-key read: no PL/pgSQL call, no tuple locked, no transaction id, no WAL.
SELECT 0 AS granted, fence, holds, holder,
       CAST(floor(date_part('epoch', expires_at) * 1000) AS bigint) AS expires_at_ms,
       CAST(floor(date_part('epoch', expires_at - now()) * 1000) AS bigint) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > now()
