-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text.
-- One statement, one round trip. Outcomes (one row, or none in a rare race):
--   granted = 1: fresh grant (new fence from the sequence, holds = 1), takeover of an
--                expired row (new fence), or re-entry by the same live owner (holds + 1,
--                same fence);
--   granted = 0: a live row of another owner; its holder, fence and expiry are returned.
-- A failed try against a live holder writes nothing: the NOT EXISTS pre-check filters
-- the INSERT's only row before it reaches the table, so no tuple is locked, no
-- transaction id is assigned, no WAL is written or flushed. (The naive ON CONFLICT ...
-- DO UPDATE ... WHERE locks the conflicting row and flushes WAL even when it updates
-- nothing.) Expiry is judged by the server's now() only.
WITH cur AS (
  SELECT owner, expires_at FROM dblock_locks WHERE name = $1
), ins AS (
  INSERT INTO dblock_locks AS l (name, owner, holds, fence, acquired_at, expires_at, holder)
  SELECT $1, CAST($2 AS varchar), 1, nextval('dblock_fence_seq'), now(),
         now() + CAST($3 AS bigint) * interval '1 millisecond', $4
   WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.owner <> CAST($2 AS varchar) AND cur.expires_at > now())
  ON CONFLICT (name) DO UPDATE SET
    holds       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.holds + 1 ELSE 1 END,
    fence       = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.fence ELSE EXCLUDED.fence END,
    acquired_at = CASE WHEN l.owner = EXCLUDED.owner AND l.expires_at > now() THEN l.acquired_at ELSE now() END,
    owner       = EXCLUDED.owner,
    expires_at  = EXCLUDED.expires_at,
    holder      = EXCLUDED.holder
  WHERE l.owner = EXCLUDED.owner OR l.expires_at <= now()
  RETURNING l.fence, l.holds, l.holder, l.expires_at
)
SELECT 1 AS granted, fence, holds, holder,
       to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at,
       CAST(floor(extract(epoch FROM (expires_at - now())) * 1000) AS bigint) AS expires_in_ms
  FROM ins
UNION ALL
SELECT 0, l.fence, l.holds, l.holder,
       to_char(l.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       CAST(floor(extract(epoch FROM (l.expires_at - now())) * 1000) AS bigint)
  FROM dblock_locks l
 WHERE l.name = $1 AND NOT EXISTS (SELECT 1 FROM ins)
