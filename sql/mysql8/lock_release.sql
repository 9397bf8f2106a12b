-- Final release of lease lock $1 by owner $2, grant $3 (its fence: a stale lease - lost, then
-- the name granted to the same session again - must not delete the newer grant).
-- 0 rows affected = it was no longer ours.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3
