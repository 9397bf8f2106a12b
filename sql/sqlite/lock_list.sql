-- `dblock locks`: every lock row with holder, holds, fence, expiry, ms left and the holder's
-- lock delay (the lease ended at expires_at - lock_delay_ms).
SELECT name, holder, holds, fence, strftime('%Y-%m-%dT%H:%M:%fZ', expires_at / 1000.0, 'unixepoch'),
       expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), lock_delay_ms
  FROM dblock_locks ORDER BY name
