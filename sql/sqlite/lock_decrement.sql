-- Releases one re-entrant hold of lease lock $1 by owner $2; returns holds left.
UPDATE dblock_locks SET holds = holds - 1 WHERE name = $1 AND owner = $2 AND holds > 1 RETURNING holds
