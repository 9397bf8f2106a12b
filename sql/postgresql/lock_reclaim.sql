-- Crash detection: ends the lease of grant $2 (fence) of lock $1 at once, for owner $3,
-- when its holder's liveness marker is free (its connection has ended). The caller sends it
-- only after it saw the marker free at least the liveness grace earlier for the same fence,
-- and then sends lock_acquire.sql, which takes the expired row over with a new fence (the
-- line bound applies as always). No lock delay: the holder's own process told it the lease
-- was lost before the grace ran out (docs/locks.md, "Crash detection").
-- Conditions re-checked here: the same grant (fence), another owner, still live, its owner
-- marker-backed ('m...') and its marker free right now (tried as a transaction-scoped
-- advisory lock, held to this statement's commit). A row: reclaimed; none: not.
UPDATE dblock_locks
   SET expires_at = now() - interval '1 millisecond'
 WHERE name = CAST($1 AS text) AND fence = CAST($2 AS bigint) AND owner <> CAST($3 AS text)
   AND expires_at > now()
   AND CASE WHEN left(owner, 1) <> 'm' THEN false
            ELSE pg_try_advisory_xact_lock(1684171887, hashtext(owner)) END
RETURNING fence
