-- The first try of a waiting acquire() (session_options::fair): lock_acquire.sql, except
-- that a free or expired name is not granted while a waiter heads its wait line
-- (migration 0004_acquire_behind_line.sql): the caller then joins the line instead of
-- barging ahead of it. No row then (free name) or granted = 0 (expired row, as read).
-- try_acquire() and the head's own tries use lock_acquire.sql and never queue.
SELECT granted, fence, holds, holder, expires_at, expires_in_ms
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text), true)
