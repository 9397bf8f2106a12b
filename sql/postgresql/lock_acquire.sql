-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text.
-- One statement, one round trip: the PL/pgSQL function dblock_lock_acquire (migration
-- 0003_acquire_claim_functions.sql) reads the row first and writes only when it must.
-- Outcomes (one row, or none in a rare race):
--   granted = 1: fresh grant (new fence from the sequence, holds = 1), takeover of an
--                expired row (new fence), or re-entry by the same live owner (holds + 1,
--                same fence);
--   granted = 0: a live row of another owner; its holder, fence and expiry are returned.
-- A failed try against a live holder writes nothing: it runs only a primary-key SELECT, so
-- no tuple is locked, no transaction id is assigned, no WAL is written or flushed. Expiry
-- is judged by the server's now() only.
-- Columns: granted, fence, holds, holder, expires_at (UTC text), expires_in_ms.
SELECT granted, fence, holds, holder, expires_at, expires_in_ms
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text))
