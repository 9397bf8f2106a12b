-- Watchdog: renews every live lock of owner $1 to now + $2 ms in ONE statement;
-- names missing from the result were stolen, reaped or expired.
UPDATE dblock_locks SET expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $2
 WHERE owner = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
RETURNING name
