-- Watchdog: renews every live lock of owner $1 to now + $2 ms in ONE statement.
-- Rows matched (CLIENT_FOUND_ROWS) fewer than the locks held locally => lock_owned
-- tells which names are still ours; the others are reported lost.
UPDATE dblock_locks SET expires_at = UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND
 WHERE owner = $1 AND expires_at > UTC_TIMESTAMP(6)
