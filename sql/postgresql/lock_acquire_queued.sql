-- Parameters as lock_acquire.sql ($5 = lock delay in ms).
-- The tries of a waiting acquire() (session_options::fair) until it has its place in line -
-- its first try, and those while its line connection is being opened: lock_acquire.sql, except
-- that a free or expired name is not granted while a waiter heads its wait line
-- (migration 0004_acquire_behind_line.sql): the caller then joins the line instead of
-- barging ahead of it. No row then (free name) or granted = 0 (expired row, as read).
-- try_acquire() and the head's own tries use lock_acquire.sql and never queue.
-- No plain-SQL fast path here (lock_acquire.sql has one). Under contention this statement
-- is refused every time - a waiting acquire's first try meets a holder - and a refusal
-- through the fast path's statement costs ~35 us more server CPU; an uncontended acquire()
-- pays the PL/pgSQL call (~30 us) instead. Hot lock, 8 contenders, 4 A/B pairs: 1.09-1.38x
-- the naive loop's grants with the fast path here, 1.18-1.54x without (docs/performance.md).
SELECT granted, fence, holds, holder, expires_at, expires_in_ms
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text), true,
                           CAST($5 AS bigint))
