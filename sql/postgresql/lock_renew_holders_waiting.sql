-- Renewal of a session that holds read-write locks or semaphore permits and waits in a line: in ONE
-- statement, every live lease lock of owner $1 (as lock_renew.sql), every live hold of it in
-- dblock_lock_holders and every live wait-line ticket of it, to now() + $2 ms. Returns the rows still
-- ours: name and slot (NULL for a lease lock; 0 a read-write hold; n semaphore permit n).
WITH tickets AS (
  UPDATE dblock_lock_waiters SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
   WHERE owner = $1 AND expires_at > now()
), holds AS (
  UPDATE dblock_lock_holders SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
   WHERE owner = $1 AND expires_at > now()
  RETURNING name, slot
), locks AS (
  UPDATE dblock_locks SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
   WHERE owner = $1 AND expires_at > now()
  RETURNING name
)
SELECT name, CAST(NULL AS integer) FROM locks
UNION ALL
SELECT name, slot FROM holds
