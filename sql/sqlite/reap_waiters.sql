-- Reaper: deletes up to $2 wait-line tickets expired for longer than $1 ms (grace), oldest
-- ticket first. An expired ticket already stopped counting for grants; this keeps the
-- table small. SQLite runs one writer at a time, so the statement is atomic against
-- renewals. Changes = the number deleted.
DELETE FROM dblock_lock_waiters
 WHERE (name, ticket) IN (SELECT name, ticket FROM dblock_lock_waiters
                           WHERE expires_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - $1
                           ORDER BY ticket LIMIT $2)
