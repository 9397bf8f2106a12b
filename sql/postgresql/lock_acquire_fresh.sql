-- Grant of lease lock $1 to owner $2 (TTL $3 ms, holder text $4, lock delay $5 ms, already
-- included in $3; line bound $6, see lock_acquire.sql) when the session has reason
-- to think the name is free (it released the name itself last, or lock_probe.sql found no
-- live holder), for a try without a ticket: lock_acquire.sql's fast path alone - the
-- name's grant lock (1684171883 'dblk', hashtext(name)) taken before the fence is drawn and held to
-- the commit, then the INSERT - without its UNION ALL fallback to dblock_lock_acquire,
-- whose plan costs server CPU on every grant even when it does not run.
-- One row (granted = 1, lock_acquire.sql's columns, but the expiry as milliseconds since the
-- epoch, expires_at_ms, which the client formats as lock_probe.sql's) when granted. No row when the name
-- has a row after all (another owner took it, it expired, it is ours) or the insert lost a
-- race: the caller then sends lock_acquire.sql, which decides every case. The name's row is
-- not read first: the INSERT's own conflict check finds it, and a separate read would probe
-- the primary key a second time on every grant (about 6 us of the pair here). So a miss on a
-- name with a row takes the grant lock (waiting, at most, for a grant or release of the same
-- name in flight to commit), draws a fence it does not use (fences only ever increase; gaps
-- are allowed) and inserts nothing, then costs a second round trip.
-- One INSERT: the grant lock is taken in the subquery's select list, which produces the row
-- that the INSERT's select list - dblock_next_fence() included - is then computed from, so the fence is
-- drawn under the lock (test FreshGrantThatLosesItsRaceToAnotherOwnerIsRefused). OFFSET 0
-- keeps the subquery from being flattened into the INSERT's SELECT. 4-5 us of server CPU
-- less than lock_acquire.sql's two CTEs.
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
SELECT CAST($1 AS text), CAST($2 AS text), 1, dblock_next_fence(), now(),
       now() + CAST($3 AS bigint) * interval '1 millisecond', CAST($4 AS text), CAST($5 AS bigint)
  FROM (SELECT pg_advisory_xact_lock(1684171883, hashtext(CAST($1 AS text))) AS grant_lock
         WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                        WHERE name = CAST($1 AS text) AND expires_at > now() AND ticket < CAST($6 AS bigint))
        OFFSET 0) AS g
ON CONFLICT (name) DO NOTHING
RETURNING 1 AS granted, fence, 1 AS holds, holder,
          CAST(floor(date_part('epoch', expires_at) * 1000) AS bigint) AS expires_at_ms,
          CAST($3 AS bigint) AS expires_in_ms
