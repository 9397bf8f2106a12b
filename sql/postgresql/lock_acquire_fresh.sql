-- Grant of lease lock $1 to owner $2 (TTL $3 ms, holder text $4) when the session has reason
-- to think the name is free: it released the name itself last, or saw a release of it since
-- it was refused. lock_acquire.sql's fast path alone - the name's grant lock
-- (1684171883 'dblk', hashtext(name)) taken before nextval and held to the commit, then the
-- INSERT - without its UNION ALL fallback to dblock_lock_acquire. That fallback's plan costs
-- 15-20 us of server CPU per grant even when it does not run (docs/performance.md, round 6).
-- One row (granted = 1, same columns as lock_acquire.sql) when granted. No row when the name
-- has a row after all (another owner took it, it expired, it is ours) or the insert lost a
-- race: the caller then sends lock_acquire.sql, which decides every case. Such a miss costs
-- a primary-key read (no grant lock, no nextval, no write) and a second round trip.
WITH g AS MATERIALIZED (
  SELECT CAST(pg_advisory_xact_lock(1684171883, hashtext(CAST($1 AS text))) AS text) AS grant_lock
   WHERE NOT EXISTS (SELECT 1 FROM dblock_locks WHERE name = CAST($1 AS text))
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
