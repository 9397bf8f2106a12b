-- The holder lookup (waiting, timeouts): the row of lease lock $1 as it is now.
-- granted = 1 when owner $2 holds it live. Returns fence, holds, holder, expiry, ms left
-- (the same columns as lock_acquire.sql's RETURNING), then the holder's lock delay.
-- lock_acquire.sql itself does not read it.
SELECT IF(owner = $2 AND expires_at > UTC_TIMESTAMP(6), 1, 0) AS granted, fence, holds, holder,
       DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%s.%fZ'),
       CAST(TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), expires_at) DIV 1000 AS SIGNED), lock_delay_ms
  FROM dblock_locks WHERE name = $1
