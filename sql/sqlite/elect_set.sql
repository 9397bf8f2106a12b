-- Leader election: stores value $4 of election $1 for owner $2's grant $3 (its fence), only
-- while the lock row is still that live grant; a row of an earlier grant is overwritten, one
-- of a later grant never. No row back = the lease is no longer ours.
-- Times are ms since the epoch, SQLite's clock.
INSERT INTO dblock_elections (name, fence, owner, value, updated_at)
SELECT l.name, l.fence, l.owner, $4, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM dblock_locks l
 WHERE l.name = $1 AND l.owner = $2 AND l.fence = $3
   AND l.expires_at - l.lock_delay_ms > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
ON CONFLICT (name) DO UPDATE
   SET fence = excluded.fence, owner = excluded.owner, value = excluded.value, updated_at = excluded.updated_at
 WHERE fence <= excluded.fence
RETURNING fence
