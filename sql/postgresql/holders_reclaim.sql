-- Crash detection: ends hold (name $1, owner $2, slot $3, fence $4) of dblock_lock_holders
-- at once when its owner's liveness marker is free (its connection has ended). Sent inside
-- a transaction after holders_gate.sql (a grant deciding meanwhile never sees the row end
-- under it), and only after the caller saw the marker free at least the liveness grace
-- earlier for the same hold and fence; the waiter's next grant deletes the expired row
-- (holders_clear.sql). No lock delay: the holder's own process told it the hold was lost
-- before the grace ran out (docs/locks.md, "Crash detection").
-- Conditions re-checked here: the same hold and grant (fence), still live, its owner
-- marker-backed ('m...') and its marker free right now (tried as a transaction-scoped
-- advisory lock, held to the commit). A row: reclaimed; none: not.
UPDATE dblock_lock_holders
   SET expires_at = now() - interval '1 millisecond'
 WHERE name = CAST($1 AS text) AND owner = CAST($2 AS text) AND slot = CAST($3 AS bigint)
   AND fence = CAST($4 AS bigint) AND expires_at > now()
   AND CASE WHEN left(owner, 1) <> 'm' THEN false
            ELSE pg_try_advisory_xact_lock(1684171887, hashtext(owner)) END
RETURNING fence
