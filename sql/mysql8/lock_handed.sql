-- A waiter's try of lease lock $1 (owner $2, ticket $3) first reads whether the previous
-- holder's release handed it the lock (lock_release_to_line.sql): the live row of $2 made for that
-- ticket. Read-only; no row = not handed (the try's upsert decides). Columns as
-- lock_probe.sql: granted (1), fence, holds, holder, expires_at_ms, expires_in_ms.
SELECT 1 AS granted, fence, holds, holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) AS expires_at_ms,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner = $2 AND ticket = CAST($3 AS SIGNED) AND expires_at > UTC_TIMESTAMP(6)
