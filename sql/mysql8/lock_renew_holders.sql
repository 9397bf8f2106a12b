-- Renewal of a session that holds read-write locks or semaphore permits: in ONE statement,
-- every live lease lock of owner $1 and every live hold of it in dblock_lock_holders, to now +
-- $2 ms. A multiple-table UPDATE driven by a one-row derived table, each table LEFT JOINed,
-- so that either may have no row; each row is updated and counted once (CLIENT_FOUND_ROWS).
-- Fewer rows matched than held locally => lock_owned_holders.sql tells which are still ours.
UPDATE (SELECT 1 AS one) AS d
  LEFT JOIN dblock_locks l ON l.owner = $1 AND l.expires_at > UTC_TIMESTAMP(6)
  LEFT JOIN dblock_lock_holders h ON h.owner = $1 AND h.expires_at > UTC_TIMESTAMP(6)
   SET l.expires_at = UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND,
       h.expires_at = UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND
