-- lock_probe.sql with the holder's liveness marker: the row of lease lock $1 only if
-- another owner than $2 holds it live (granted (0), fence, holds, holder, expires_at_ms,
-- expires_in_ms, as lock_probe.sql), then
--   backed: 0, or when the holder's owner token starts with 'm' (its session holds a
--           marker), 1 + the token's second character as a digit (its window code),
--   gone:   1 when that marker is free: the connection that held it has ended.
-- The marker is tested by trying it as a transaction-scoped advisory lock: free = taken
-- until this statement's transaction ends (microseconds), held = refused at once; a read of
-- pg_locks would copy the whole lock table. Only marker-backed owners are tried (CASE keeps
-- the order). No tuple locked, no transaction id, no WAL.
SELECT 0 AS granted, fence, holds, holder,
       CAST(floor(date_part('epoch', expires_at) * 1000) AS bigint) AS expires_at_ms,
       CAST(floor(date_part('epoch', expires_at - now()) * 1000) AS bigint) AS expires_in_ms,
       CASE WHEN left(owner, 1) = 'm' THEN ascii(substr(owner, 2, 1)) - 47 ELSE 0 END AS backed,
       CASE WHEN left(owner, 1) <> 'm' THEN 0
            WHEN pg_try_advisory_xact_lock(1684171887, hashtext(owner)) THEN 1
            ELSE 0 END AS gone
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2 AND expires_at > now()
