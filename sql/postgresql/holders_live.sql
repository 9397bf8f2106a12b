-- Inside a grant's transaction, after holders_clear.sql: every live hold of name $1 (a
-- read-write lock's owners, or a semaphore's permits), lowest slot first.
-- Columns: owner, slot, kind, holds, write_holds, permits, fence, holder, expires_at (UTC
-- text), expires_in_ms, lock_delay_ms.
SELECT owner, slot, kind, holds, write_holds, permits, fence, holder, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint), lock_delay_ms
  FROM dblock_lock_holders
 WHERE name = $1 AND expires_at > now()
 ORDER BY slot, fence
