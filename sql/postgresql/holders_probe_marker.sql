-- Crash detection for read-write locks and semaphores: every live hold of name $1 (rows of
-- dblock_lock_holders) of owners other than $2, lowest slot first, with the holder's
-- liveness marker, as lock_probe_marker.sql reads it for a lease lock.
-- Columns: owner, slot, fence, holds, write_holds, holder, expires_at_ms, expires_in_ms, then
--   backed: 0, or when the hold's owner token starts with 'm' (its session holds a
--           marker), 1 + the token's second character as a digit (its window code),
--   gone:   1 when that marker is free: the connection that held it has ended.
-- The marker is tried as a transaction-scoped advisory lock (free = taken until this
-- statement's transaction ends, microseconds; held = refused at once); several permits of
-- one owner try it again in the same transaction, which re-enters. Only marker-backed owners
-- are tried (CASE keeps the order). Read-only: no tuple locked, no transaction id, no WAL.
SELECT owner, slot, fence, holds, write_holds, holder,
       CAST(floor(date_part('epoch', expires_at) * 1000) AS bigint) AS expires_at_ms,
       CAST(floor(date_part('epoch', expires_at - now()) * 1000) AS bigint) AS expires_in_ms,
       CASE WHEN left(owner, 1) = 'm' THEN ascii(substr(owner, 2, 1)) - 47 ELSE 0 END AS backed,
       CASE WHEN left(owner, 1) <> 'm' THEN 0
            WHEN pg_try_advisory_xact_lock(1684171887, hashtext(owner)) THEN 1
            ELSE 0 END AS gone
  FROM dblock_lock_holders
 WHERE name = $1 AND owner <> $2 AND expires_at > now()
 ORDER BY slot, owner
