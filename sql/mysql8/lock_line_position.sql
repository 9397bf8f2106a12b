-- Where ticket $2 stands in the wait line of lease lock $1: the live tickets ahead of it, and
-- the fence of the live grant of the name (0 when none). A waiter that is not first in line
-- sends this read instead of a try, so only the first tries.
SELECT (SELECT COUNT(*) FROM dblock_lock_waiters
         WHERE name = $1 AND ticket < $2 AND expires_at > UTC_TIMESTAMP(6)) AS ahead,
       COALESCE((SELECT fence FROM dblock_locks WHERE name = $1 AND expires_at > UTC_TIMESTAMP(6)), 0) AS fence
