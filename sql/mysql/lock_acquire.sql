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
-- The fence is NEXTVAL of the sequence (a value is consumed even when unused: gaps are fine).
-- A takeover draws it in the UPDATE list, evaluated after the duplicate row is locked, so no
-- other grant of the name can come between the draw and this grant. A fresh insert draws it
-- in the SELECT list, before its row exists: if another owner's whole grant and release fit between
-- that draw and the insert, this grant carries the smaller token (docs/locks.md, Fencing).
-- MySQL 8 differs: no sequences (an AUTO_INCREMENT counter table instead), no RETURNING,
-- and VALUES() here is deprecated in favour of a row alias.
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
SELECT $1, $2, 1, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6),
       UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, $4, $5
  FROM DUAL
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                    WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6) AND ticket < CAST($6 AS SIGNED))
ON DUPLICATE KEY UPDATE
  holds       = IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), holds + 1,
                   IF(expires_at <= UTC_TIMESTAMP(6), 1, holds)),
  fence       = IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), fence,
                   IF(expires_at <= UTC_TIMESTAMP(6), NEXTVAL(dblock_fence_seq), fence)),
  acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),
  holder      = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner), VALUES(holder), holder),
  owner       = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
  expires_at  = IF(owner = VALUES(owner), VALUES(expires_at), expires_at),
  lock_delay_ms = IF(owner = VALUES(owner), VALUES(lock_delay_ms), lock_delay_ms)
RETURNING IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
          DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ') AS expires_at_text,
          CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED) AS expires_in_ms
