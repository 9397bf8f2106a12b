-- Final release of lease lock $1 by owner $2, grant $3 (its fence: a stale lease - lost, then
-- the name granted to the same session again - must not delete the newer grant).
-- Only at holds = 1 (more: another thread of a session-scoped session re-entered meanwhile,
-- and the caller sends lock_decrement.sql instead). 0 rows affected = it was no longer ours.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3 AND holds = 1
