-- The first try of a waiting acquire() (session_options::fair): lock_acquire.sql, except
-- that a free or expired name is not granted while a waiter heads its wait line
-- (migration 0004_acquire_behind_line.sql): the caller then joins the line instead of
-- barging ahead of it. No row then (free name) or granted = 0 (expired row, as read).
-- try_acquire() and the head's own tries use lock_acquire.sql and never queue.
-- The fast path (see lock_acquire.sql) also needs the shared try of the line key
-- (1684171889 'dblq', held to the commit, as in the function); when it fails, ins is empty
-- and the function refuses with p_behind_line = true. CASE, not AND: the key is tried only
-- for a name without a row (SQL leaves the order of AND's operands to the planner).
WITH g AS MATERIALIZED (
  SELECT CAST(pg_advisory_xact_lock(1684171883, hashtext(CAST($1 AS text))) AS text) AS grant_lock
   WHERE CASE WHEN NOT EXISTS (SELECT 1 FROM dblock_locks WHERE name = CAST($1 AS text))
              THEN pg_try_advisory_xact_lock_shared(1684171889, hashtext(CAST($1 AS text)))
              ELSE false END
), ins AS (
  INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder)
  SELECT CAST($1 AS text), CAST($2 AS text), 1, nextval('dblock_fence_seq'), now(),
         now() + CAST($3 AS bigint) * interval '1 millisecond', CAST($4 AS text)
    FROM g
  ON CONFLICT (name) DO NOTHING
  RETURNING fence, holder, expires_at
)
SELECT 1 AS granted, fence, 1 AS holds, holder,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at,
       CAST($3 AS bigint) AS expires_in_ms
  FROM ins
UNION ALL
SELECT granted, fence, holds, holder, expires_at, expires_in_ms
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text), true)
 WHERE NOT EXISTS (SELECT 1 FROM ins)
