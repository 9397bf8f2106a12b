-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text;
-- $5 = the holder's lock delay in ms, already included in $3 (the row's expires_at is when
-- another owner may take it over), stored for `dblock locks`; $6 = the line bound: a row is
-- written only if no live waiter of the name (dblock_lock_waiters, migration 0006) has a
-- ticket below it - the maximum integer for a try without a ticket, the waiter's own ticket
-- for its try (the caller deletes the ticket once granted), 0 for a re-entry.
-- One statement: fresh grant (fence = counter + 1; a trigger advances dblock_fence),
-- takeover of an expired row (new fence), or re-entry by the same live owner
-- (holds + 1, same fence). A live row of another owner makes the upsert's WHERE false:
-- no row comes back (lock_holder then tells who holds it, only when asked), as when an
-- earlier waiter is in line.
-- A live row of $2 whose ticket is $6 was handed to this waiter by the previous holder's
-- release (lock_hand_off.sql) after the waiter's read (lock_handed.sql): granted, holds kept
-- (not a re-entry); only its expiry moves to now + TTL.
-- SQLite's clock: julianday('now') is fixed for the whole statement; times are ms. expires_at
-- comes back in ms: the library formats it (cheaper than strftime in the statement).
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
SELECT $1, $2, 1, (SELECT last + 1 FROM dblock_fence WHERE id = 1),
       CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $3, $4, $5
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                    WHERE name = $1 AND ticket < $6
                      AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
ON CONFLICT (name) DO UPDATE SET
  holds       = CASE WHEN owner = excluded.owner AND expires_at > excluded.acquired_at AND ticket = $6 THEN holds
                     WHEN owner = excluded.owner AND expires_at > excluded.acquired_at THEN holds + 1 ELSE 1 END,
  fence       = CASE WHEN owner = excluded.owner AND expires_at > excluded.acquired_at THEN fence ELSE excluded.fence END,
  acquired_at = CASE WHEN owner = excluded.owner AND expires_at > excluded.acquired_at THEN acquired_at
                     ELSE excluded.acquired_at END,
  owner       = excluded.owner,
  expires_at  = excluded.expires_at,
  holder      = excluded.holder,
  lock_delay_ms = excluded.lock_delay_ms
WHERE owner = excluded.owner OR expires_at <= excluded.acquired_at
RETURNING 1, fence, holds, holder, expires_at,
          expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
