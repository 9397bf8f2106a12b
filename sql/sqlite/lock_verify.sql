-- guard.verify_in(tx): the lock row is still ours, same fence, not expired. SQLite has
-- no row locks: the caller's BEGIN IMMEDIATE transaction holds the database's write
-- lock, so no takeover can commit before the caller does.
SELECT fence FROM dblock_locks
 WHERE name = $1 AND owner = $2 AND fence = $3
   AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
