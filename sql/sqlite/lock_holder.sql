-- The current row of lease lock $1: holder text, fence, expiry (UTC text), ms left, holds
-- and the holder's lock delay.
SELECT holder, fence, strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch'),
       expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), holds, lock_delay_ms
  FROM dblock_locks WHERE name = $1
