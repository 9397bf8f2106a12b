-- Final release of lease lock $1 by owner $2, grant $3 (its fence: a stale lease - lost, then
-- the name granted to the same session again - must not delete the newer grant).
-- Only at holds <= $4: 1 while the session holds the same grant through another local hold
-- (more holds: the caller sends lock_decrement.sql instead), else 2147483647 (a hold the
-- session never learnt of goes with the row). 0 rows affected = it was no longer ours.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3 AND holds <= $4
