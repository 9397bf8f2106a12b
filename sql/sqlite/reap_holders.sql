-- Reaper: deletes up to $2 read-write lock and semaphore holds expired for longer than $1
-- ms (grace), oldest first. SQLite runs one writer at a time, so the statement is atomic
-- against renewals. Changes = the number deleted.
DELETE FROM dblock_lock_holders
 WHERE rowid IN (SELECT rowid FROM dblock_lock_holders
                  WHERE expires_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - $1
                  ORDER BY expires_at LIMIT $2)
