-- Inside a grant's transaction, after holders_clear.sql: every live hold of name $1 (a
-- read-write lock's owners, or a semaphore's permits), lowest slot first. A locking read: the
-- current rows, whatever the snapshot.
-- Columns: owner, slot, kind, holds, write_holds, permits, fence, holder, expires_at (UTC
-- text), expires_in_ms, lock_delay_ms.
SELECT owner, slot, kind, holds, write_holds, permits, fence, holder, DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'), CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), lock_delay_ms
  FROM dblock_lock_holders
 WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6)
 ORDER BY slot, fence
   FOR UPDATE
