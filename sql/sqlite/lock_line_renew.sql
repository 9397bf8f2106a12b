-- Renews every live wait-line ticket of owner $1 to now + $2 ms; sent after lock_renew.sql
-- while the session has waiters. A ticket that expired is not revived.
UPDATE dblock_lock_waiters SET expires_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $2
 WHERE owner = $1 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
