-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text;
-- $5 = the holder's lock delay in ms, already included in $3 (the row's expires_at is when
-- another owner may take it over), stored for `dblock locks`; $6 = the line bound: the row
-- is written only if no live waiter of the name (dblock_lock_waiters) has a ticket below it -
-- the maximum bigint for a try without a ticket, the waiter's own ticket for its try, 0 for a
-- re-entry. Otherwise the SELECT yields no row: nothing is written (0 rows affected).
-- Inserts a fresh grant, takes over an expired row, or re-enters a live row of the same
-- owner; a live row of another owner is left exactly as it was.
-- MySQL 8.0 returns no rows from an INSERT and has no sequences, so this statement only writes the
-- row: a new grant (fresh or taken over) gets fence 0, "not drawn yet"; a re-entry keeps its
-- fence. lock_fence_draw.sql and lock_fence_set.sql then give the new grant the next value of
-- the fence counter while the row is ours, and lock_state.sql reads the row back. Drawing
-- after the row is written keeps grants of one name in fence order: the next grant of the
-- name can only start after this one ends, and so draws later.
-- A live row of $2 still without a fence is a grant whose draw was cut short (a lost
-- connection, a deadlock victim): trying again completes it, with its holds unchanged.
-- Assignments run left to right, each seeing the columns already assigned (MySQL 8.0 and
-- MariaDB alike), so holds/fence/acquired_at/holder are decided from the old owner and
-- expiry, then owner from the old expiry, and expires_at last from the NEW owner.
-- The values are the statement's parameters again, not VALUES(col) (deprecated in MySQL 8.0.20)
-- nor a row alias (MySQL 8.0.19+, refused by MariaDB): the one spelling both accept.
-- UTC_TIMESTAMP(6) is the statement's start time on the server: the only clock.
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder, lock_delay_ms)
SELECT $1, $2, 1, 0, UTC_TIMESTAMP(6),
       UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, $4, $5
  FROM DUAL
 WHERE NOT EXISTS (SELECT 1 FROM dblock_lock_waiters
                    WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6) AND ticket < CAST($6 AS SIGNED))
ON DUPLICATE KEY UPDATE
  holds       = IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), IF(fence = 0, holds, holds + 1),
                   IF(expires_at <= UTC_TIMESTAMP(6), 1, holds)),
  fence       = IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), fence,
                   IF(expires_at <= UTC_TIMESTAMP(6), 0, fence)),
  acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), acquired_at),
  holder      = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = $2, $4, holder),
  owner       = IF(expires_at <= UTC_TIMESTAMP(6), $2, owner),
  expires_at  = IF(owner = $2, UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, expires_at),
  lock_delay_ms = IF(owner = $2, $5, lock_delay_ms)
