-- Renewal while the session waits in a wait line: lock_renew.sql, and in the same statement
-- every live wait-line ticket of owner $1 (dblock_lock_waiters) to now() + $2 ms. A ticket
-- that expired is not revived: its waiter lost its place.
WITH tickets AS (
  UPDATE dblock_lock_waiters SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
   WHERE owner = $1 AND expires_at > now()
)
UPDATE dblock_locks SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
 WHERE owner = $1 AND expires_at > now()
RETURNING name
