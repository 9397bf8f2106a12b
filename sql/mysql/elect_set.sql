-- Leader election: stores value $4 of election $1 for owner $2's grant $3 (its fence), only
-- while the lock row is still that live grant; a row of an earlier grant is overwritten, one
-- of a later grant never (each assignment keeps the old column when the stored fence is
-- larger; fence is assigned last, as assignments see the columns assigned before them;
-- the columns are qualified: the SELECT's dblock_locks has columns of the same names).
-- 0 rows affected = the lease is no longer ours (CLIENT_FOUND_ROWS counts a matched row).
INSERT INTO dblock_elections (name, fence, owner, value, updated_at)
SELECT l.name, l.fence, l.owner, $4, UTC_TIMESTAMP(6)
  FROM dblock_locks l
 WHERE l.name = $1 AND l.owner = $2 AND l.fence = CAST($3 AS SIGNED)
   AND l.expires_at - INTERVAL (l.lock_delay_ms * 1000) MICROSECOND > UTC_TIMESTAMP(6)
ON DUPLICATE KEY UPDATE
  owner      = IF(dblock_elections.fence <= CAST($3 AS SIGNED), $2, dblock_elections.owner),
  value      = IF(dblock_elections.fence <= CAST($3 AS SIGNED), $4, dblock_elections.value),
  updated_at = IF(dblock_elections.fence <= CAST($3 AS SIGNED), UTC_TIMESTAMP(6), dblock_elections.updated_at),
  fence      = IF(dblock_elections.fence <= CAST($3 AS SIGNED), CAST($3 AS SIGNED), dblock_elections.fence)
