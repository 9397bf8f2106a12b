-- Gives up ticket $1 of owner $2: granted (the grant does not delete it here), or a wait
-- that timed out or failed.
DELETE FROM dblock_lock_waiters WHERE ticket = $1 AND owner = $2
