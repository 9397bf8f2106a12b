-- Final release of a hold: deletes the row of name $1, owner $2, slot $3 (0: read-write lock;
-- n: semaphore permit n), fence $4 (a stale hold - lost, then granted again - must not delete
-- the newer grant). Nothing deleted = it was no longer ours.
DELETE FROM dblock_lock_holders WHERE name = $1 AND owner = $2 AND slot = CAST($3 AS SIGNED) AND fence = CAST($4 AS SIGNED)
