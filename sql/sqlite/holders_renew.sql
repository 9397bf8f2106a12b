-- Renewal of a session that holds read-write locks or semaphore permits, after
-- lock_renew.sql (SQLite runs in the process: no network round trip): every live hold of
-- owner $1 to now + $2 ms. Returns the holds still ours: name, slot.
UPDATE dblock_lock_holders SET expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $2
 WHERE owner = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
RETURNING name, slot
