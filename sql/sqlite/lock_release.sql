-- Final release of lease lock $1 by owner $2, grant $3 (its fence: a stale lease - lost, then
-- the name granted to the same session again - must not delete the newer grant).
-- No row deleted (the change count, read by the caller) = it was no longer ours. No
-- RETURNING: SQLite would buffer the returned row in a temporary table for nothing.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3
