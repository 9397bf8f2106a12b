-- lock_probe.sql for a try whose caller wants no holder (try_acquire): only the
-- milliseconds left of another owner's live hold of lease lock $1 ($2: this session's
-- owner). One column: in process, the columns read and converted are most of the cost.
-- No row: free, expired or ours - the caller then runs lock_acquire.sql. A read.
SELECT expires_at - CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS expires_in_ms
  FROM dblock_locks
 WHERE name = $1 AND owner <> $2
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
