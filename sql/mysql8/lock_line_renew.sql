-- Renews every live wait-line ticket of owner $1 to now + $2 ms; sent after lock_renew.sql
-- while the session has waiters. A ticket that expired is not revived: its waiter lost its
-- place.
UPDATE dblock_lock_waiters SET expires_at = UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND
 WHERE owner = $1 AND expires_at > UTC_TIMESTAMP(6)
