-- Reaper: deletes up to $2 lock rows expired for longer than $1 ms (grace), oldest
-- first. SQLite runs one writer at a time, so the statement is atomic against renewals.
-- Changes = the number deleted.
DELETE FROM dblock_locks
 WHERE name IN (SELECT name FROM dblock_locks
                 WHERE expires_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - $1
                 ORDER BY expires_at LIMIT $2)
