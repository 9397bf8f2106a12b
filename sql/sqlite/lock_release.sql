-- Final release of lease lock $1 by owner $2. No row back = it was no longer ours.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 RETURNING 0
