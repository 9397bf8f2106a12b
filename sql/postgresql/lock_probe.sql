-- Read-only retry of a refused acquire of lease lock $1 by owner $2 (sent instead of
-- lock_acquire.sql while this session last saw another owner hold the name live, the
-- holder's expiry has not passed and no release of the name was seen since): the row
-- only if another owner still holds it live. Columns as lock_acquire.sql's, granted = 0.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A plain
-- primary-key read: no PL/pgSQL call, no tuple locked, no transaction id, no WAL.
SELECT 0 AS granted, fence, holds, holder,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at,
       CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > now()
