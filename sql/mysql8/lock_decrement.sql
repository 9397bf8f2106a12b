-- Releases one re-entrant hold of lease lock $1 by owner $2, grant $3 (its fence; re-entry
-- keeps it), holds > 1 stays held.
-- 0 rows matched = it was no longer ours.
UPDATE dblock_locks SET holds = holds - 1 WHERE name = $1 AND owner = $2 AND fence = $3 AND holds > 1
