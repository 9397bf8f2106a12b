-- A waiter's try of lease lock $1 (owner $2, ticket $3) looks before it writes: the live row
-- that answers the try without the upsert. granted 1: the previous holder's release handed it
-- to this ticket (lock_release_to_line.sql); granted 0: another owner holds it (the refusal,
-- naming the holder). No row: free, expired, or a row of $2 not handed to this ticket - the
-- upsert (lock_acquire.sql) decides. Read-only and without row locks: a waiter that looks
-- often never delays the release it waits for. Columns as lock_probe.sql: granted, fence,
-- holds, holder, expires_at_ms, expires_in_ms; then locked: 1 when the release made this
-- hand-off under its server lock (locked_ticket, migration 0018), so that a wait for that lock
-- (lock_handed_wait.sql) can stand for the confirming write.
SELECT IF(owner = $2, 1, 0) AS granted, fence, holds, holder,
       CAST(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', expires_at) DIV 1000 AS SIGNED) AS expires_at_ms,
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms,
       CAST(COALESCE(locked_ticket = CAST($3 AS SIGNED), 0) AS SIGNED) AS locked
  FROM dblock_locks
 WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6) AND (owner <> $2 OR ticket = CAST($3 AS SIGNED))
