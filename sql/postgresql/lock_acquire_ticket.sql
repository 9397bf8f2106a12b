-- A waiter's try of lease lock $1 (parameters as lock_acquire.sql; $6 = the waiter's ticket
-- in dblock_lock_waiters): granted only when no live ticket of the name is below $6, and
-- then the ticket is deleted in the same transaction. Same columns and outcomes as
-- lock_acquire.sql. No plain-SQL fast path: a waiter meets a holder almost every time.
SELECT granted, fence, holds, holder, expires_at, expires_in_ms
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text), false,
                           CAST($5 AS bigint), CAST($6 AS bigint))
