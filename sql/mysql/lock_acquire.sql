-- Acquire or re-enter lease lock $1 for owner $2 with a TTL of $3 ms; $4 = holder text.
-- Statement 1 of 2 (then lock_state reads the outcome): inserts a fresh grant, takes
-- over an expired row, or re-enters a live row of the same owner; a live row of
-- another owner is left exactly as it was.
-- MariaDB evaluates ON DUPLICATE KEY UPDATE assignments left to right, each seeing the
-- columns already assigned, so the order matters: holds/fence/acquired_at/holder are
-- decided from the old owner and expiry, then owner from the old expiry, and
-- expires_at last from the NEW owner (ours exactly when the grant happened).
-- UTC_TIMESTAMP(6) is the statement's start time on the server: the only clock.
-- The fence is NEXTVAL of the sequence (a value is consumed even when unused: gaps are fine).
-- MySQL 8 differs: no sequences (an AUTO_INCREMENT counter table instead) and VALUES()
-- here is deprecated in favour of a row alias.
INSERT INTO dblock_locks (name, owner, holds, fence, acquired_at, expires_at, holder)
VALUES ($1, $2, 1, NEXTVAL(dblock_fence_seq), UTC_TIMESTAMP(6),
        UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, $4)
ON DUPLICATE KEY UPDATE
  holds       = IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), holds + 1,
                   IF(expires_at <= UTC_TIMESTAMP(6), 1, holds)),
  fence       = IF(owner = VALUES(owner) AND expires_at > UTC_TIMESTAMP(6), fence,
                   IF(expires_at <= UTC_TIMESTAMP(6), VALUES(fence), fence)),
  acquired_at = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(acquired_at), acquired_at),
  holder      = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = VALUES(owner), VALUES(holder), holder),
  owner       = IF(expires_at <= UTC_TIMESTAMP(6), VALUES(owner), owner),
  expires_at  = IF(owner = VALUES(owner), VALUES(expires_at), expires_at)
