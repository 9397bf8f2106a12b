-- The holder lookup (waiting, timeouts): the row of lease lock $1 as it is now.
-- granted = 1 when owner $2 holds it live. Returns fence, holds, holder, expiry, ms left:
-- the same columns as lock_acquire.sql's RETURNING (acquire itself no longer reads it).
SELECT IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
       DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'),
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED)
  FROM dblock_locks WHERE name = $1
