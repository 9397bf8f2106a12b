-- Final release of lease lock $1 by owner $2. 0 rows affected = it was no longer ours.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2
