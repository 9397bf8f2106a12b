-- Final release of lease lock $1 by owner $2, grant $3 (its fence), without waiting for
-- the WAL flush (session_options::async_release): lock_release.sql plus
-- set_config('synchronous_commit',
-- 'off', true), which lasts until the end of the current transaction - this statement's
-- own implicit one, whose commit reads the setting - and is evaluated only when the row
-- was ours. Used only outside a caller's transaction. Any later durable commit (the next
-- grant in particular) flushes this release with it: a crash can lose the release (the
-- row comes back and expires after its TTL), never order a later grant before it.
-- Sends NOTIFY dblock_release like lock_release.sql. No row back = it was no longer ours.
-- Both calls are in RETURNING, evaluated only for the deleted row and before the commit.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND fence = $3
RETURNING 0 AS holds, CAST(pg_notify('dblock_release', name) AS text) AS notified,
          set_config('synchronous_commit', 'off', true) AS synchronous_commit
