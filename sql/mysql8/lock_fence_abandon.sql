-- Take back the row of a grant of lease lock $1 to owner $2 whose fence draw failed (a
-- deadlock, a conflict): it still has fence 0, "not drawn yet", and was never reported as
-- granted. Left in place, the owner's next try would wait in the name's line for its own row.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = 0
