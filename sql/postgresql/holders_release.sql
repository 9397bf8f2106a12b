-- Final release of a hold: deletes the row of name $1, owner $2, slot $3 (0: read-write lock;
-- n: semaphore permit n), fence $4 (a stale hold - lost, then granted again - must not delete
-- the newer grant). Nothing deleted = it was no longer ours. The same statement sends
-- NOTIFY dblock_release with the name, so waiters wake at once.
DELETE FROM dblock_lock_holders WHERE name = $1 AND owner = $2 AND slot = CAST($3 AS bigint) AND fence = CAST($4 AS bigint)
RETURNING CAST(pg_notify('dblock_release', name) AS text) AS notified
