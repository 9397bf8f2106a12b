-- Leader election: stores value $4 of election $1 for owner $2's grant $3 (its fence), only
-- while the lock row is still that live grant; a row of an earlier grant is overwritten, one
-- of a later grant never. NOTIFY dblock_release with the name wakes observers (and waiters,
-- which try once more) at once. No row back = the lease is no longer ours.
-- Columns: fence, notified.
INSERT INTO dblock_elections (name, fence, owner, value, updated_at)
SELECT l.name, l.fence, l.owner, CAST($4 AS text), now()
  FROM dblock_locks l
 WHERE l.name = CAST($1 AS text) AND l.owner = CAST($2 AS text) AND l.fence = CAST($3 AS bigint)
   AND l.expires_at - l.lock_delay_ms * interval '1 millisecond' > now()
ON CONFLICT (name) DO UPDATE
   SET fence = excluded.fence, owner = excluded.owner, value = excluded.value, updated_at = excluded.updated_at
 WHERE dblock_elections.fence <= excluded.fence
RETURNING fence, CAST(pg_notify('dblock_release', name) AS text) AS notified
