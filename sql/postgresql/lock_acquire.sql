-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text;
-- $5 = the holder's lock delay in ms (session_options::lock_delay), already included in $3:
-- the row's expires_at is when another owner may take it over, stored for `dblock locks`;
-- $6 = the line bound: a free or expired name is granted only if no live waiter of the name
-- has a ticket below it (dblock_lock_waiters, migration 0006). The client sends the maximum
-- bigint for a try without a ticket (every waiter is ahead of it), the ticket itself for a
-- waiter's try (the function then deletes the ticket with the grant), 0 for a re-entry.
-- One statement, one round trip, in two parts:
--   fast path - a name with no row (never taken, or released: release deletes the row) is
--               inserted by plain SQL: the name's grant lock, a new fence, the INSERT.
--               No PL/pgSQL call: a top-level call costs ~25-35 us of server CPU per grant
--               (docs/performance.md), a tenth of a durable grant.
--   otherwise - the PL/pgSQL function dblock_lock_acquire (migrations 0003 to 0006) reads
--               the row first and writes only when it must: takeover of an expired row,
--               re-entry, refusal (read-only), or the fast path's lost race.
-- The fast path keeps the function's order: the transaction-scoped grant lock
-- (1684171883 'dblk', hashtext(name)) is taken BEFORE the fence is drawn and held to the commit, so
-- grants of one name carry increasing fences. It runs only if the name has no row in the
-- statement's snapshot (the one-time filter of g): a live holder's row means no lock, no
-- fence drawn, no write. g is MATERIALIZED so its row - and so the INSERT's fence - exists
-- only after the grant lock was taken. ON CONFLICT DO NOTHING: a row inserted meanwhile by
-- another owner makes ins empty and the function decides, with fresh snapshots.
-- Outcomes (one row, or none in a rare race):
--   granted = 1: fresh grant (new fence from dblock_next_fence(), holds = 1), takeover of an
--                expired row (new fence), or re-entry by the same live owner (holds + 1,
--                same fence; when $6 is not 0, a live row of the same owner granted on an
--                earlier timeline is granted afresh instead, see migration 0007);
--   granted = 0: a live row of another owner, or an expired one while an earlier waiter is
--                in line; its holder, fence and expiry are returned.
-- No row: the name has no row but an earlier waiter is in line (or a rare lost race).
-- A failed try against a live holder writes nothing: a primary-key read, then the
-- function's primary-key SELECT; no tuple locked, no transaction id, no WAL. (Only a try
-- that lost the race above has drawn a fence it does not use: about one nextval in 32
-- logs the sequence, so that refusal may write and flush. Gaps in fences are harmless.)
-- A fence is the server's WAL timeline * 2^40 + a dblock_fence_seq value (migration 0007):
-- increasing across a promotion of a standby. Expiry is judged by the server's now() only.
-- Columns: granted, fence, holds, holder, expires_at (UTC text), expires_in_ms.
WITH g AS MATERIALIZED (
  SELECT CAST(pg_advisory_xact_lock(1684171883, hashtext(CAST($1 AS text))) AS text) AS grant_lock
   WHERE NOT EXISTS (SELECT 1 FROM dblock_locks WHERE name = CAST($1 AS text))
     AND NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                      WHERE name = CAST($1 AS text) AND expires_at > now() AND ticket < CAST($6 AS bigint))
), ins AS (
  INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
  SELECT CAST($1 AS text), CAST($2 AS text), 1, dblock_next_fence(), now(),
         now() + CAST($3 AS bigint) * interval '1 millisecond', CAST($4 AS text), CAST($5 AS bigint)
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
  FROM dblock_lock_acquire(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint), CAST($4 AS text), false,
                           CAST($5 AS bigint), CAST($6 AS bigint))
 WHERE NOT EXISTS (SELECT 1 FROM ins)
