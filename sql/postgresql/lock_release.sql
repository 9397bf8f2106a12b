-- Final release of lease lock $1 by owner $2: deletes the row and, in the same
-- statement, sends NOTIFY dblock_release with the name so waiters wake at once
-- (delivered only if the statement commits). No row back = it was no longer ours.
WITH d AS (
  DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 RETURNING name
)
SELECT 0 AS holds FROM d CROSS JOIN LATERAL (SELECT pg_notify('dblock_release', d.name)) AS n
