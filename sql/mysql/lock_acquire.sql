-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text;
-- $5 = the holder's lock delay in ms, already included in $3 (the row's expires_at is when
-- another owner may take it over), stored for `dblock locks`; $6 = the line bound: the row
-- is written only if no live waiter of the name (dblock_lock_waiters, migration 0006) has a
-- ticket below it - the maximum bigint for a try without a ticket, the waiter's own ticket
-- for its try (the caller deletes the ticket once granted), 0 for a re-entry. Otherwise the
-- SELECT yields no row: nothing is written and nothing returned (refused, holder unknown).
-- One statement, one round trip: inserts a fresh grant, takes over an expired row, or
-- re-enters a live row of the same owner; a live row of another owner is left exactly as
-- it was. RETURNING (MariaDB 10.5+) gives the row as the statement left it, in every one
-- of those four cases (an unchanged row too), in the same columns as lock_state.sql:
--   granted, fence, holds, holder, expires_at (text), expires_in_ms.
-- granted = 1 exactly when the row is now owner $2's: the owner only changes on an
-- expired row, so a row of $2 after the statement is one this statement granted (fresh,
-- taken over or re-entered), with expires_at = now + TTL.
-- A refused try changes no column (InnoDB skips the row update: no undo, no redo), but,
-- like any INSERT that hits a duplicate key with ON DUPLICATE KEY UPDATE, it X-locks the
-- existing row until the statement's autocommit ends; RETURNING takes no other lock.
-- MariaDB evaluates ON DUPLICATE KEY UPDATE assignments left to right, each seeing the
-- columns already assigned, so the order matters: holds/fence/acquired_at/holder are
-- decided from the old owner and expiry, then owner from the old expiry, and
-- expires_at last from the NEW owner (ours exactly when the grant happened).
-- UTC_TIMESTAMP(6) is the statement's start time on the server (the same value in VALUES,
-- the assignments and RETURNING; unlike NOW(6) it ignores the session time_zone): the
-- only clock.
-- The fence is drawn where the row is ours and locked, so grants of one name carry
-- increasing fences in grant order: the SELECT yields the row twice, a grant pass then a draw
-- pass, told apart by the fence they carry (0, then -1; a CHECK-free column, since CHECK
-- constraints are tested before the duplicate key is found). The grant pass inserts a fresh
-- grant, takes over an expired row, re-enters or leaves the row, as above, with fence 0 ("not
-- drawn yet") for a new grant. The draw pass always meets the row the grant pass left (a
-- duplicate key, already X-locked by this statement) and changes only the fence: NEXTVAL when
-- the row is owner $2's with fence 0. A NEXTVAL drawn before the row exists could be
-- overtaken by another owner's whole grant and release of the name, and this later grant
-- would carry the smaller token. A value is consumed only by a new grant (IF evaluates one
-- branch). RETURNING gives one row per pass: the last is the result (a granted row whose
-- fence is not positive would mean the passes came in the other order: the caller refuses it).
-- A live row of $2 whose ticket is $6 was handed to this waiter by the previous holder's
-- release (lock_release_to_line.sql) after the waiter's read (lock_handed.sql): granted, holds kept
-- (not a re-entry); only its expiry moves to now + TTL.
-- MySQL 8 differs: no sequences (sql/mysql8/ draws from a counter row), no RETURNING,
-- and VALUES() here is deprecated there.
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
SELECT $1, $2, 1, pass.marker, UTC_TIMESTAMP(6),
       UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, $4, $5
  FROM (SELECT 0 AS marker UNION ALL SELECT -1) AS pass
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                    WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6) AND ticket < CAST($6 AS SIGNED))
ON DUPLICATE KEY UPDATE
  holds       = IF(VALUES(fence) < 0, holds,
                   IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6),
                      IF(ticket <=> CAST($6 AS SIGNED), holds, holds + 1),
                      IF(expires_at <= UTC_TIMESTAMP(6), 1, holds))),
  fence       = IF(VALUES(fence) < 0, IF(owner = VALUES(owner) AND fence = 0, NEXTVAL(dblock_fence_seq), fence),
                   IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), fence,
                      IF(expires_at <= UTC_TIMESTAMP(6), 0, fence))),
  acquired_at = IF(VALUES(fence) = 0 AND expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),
  holder      = IF(VALUES(fence) = 0 AND (expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner)),
                   VALUES(holder), holder),
  owner       = IF(VALUES(fence) = 0 AND expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
  expires_at  = IF(VALUES(fence) = 0 AND owner = VALUES(owner), VALUES(expires_at), expires_at),
  lock_delay_ms = IF(VALUES(fence) = 0 AND owner = VALUES(owner), VALUES(lock_delay_ms), lock_delay_ms)
RETURNING IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
          DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS expires_at_text,
          CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms
