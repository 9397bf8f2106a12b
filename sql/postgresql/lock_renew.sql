-- Watchdog: renews every live lock of owner $1 to now() + $2 ms in ONE statement
-- (like an etcd lease keeping all its keys). A lock missing from the returned names
-- was stolen, reaped or expired: the session reports it lost and stops renewing it.
UPDATE dblock_locks SET expires_at = now() + CAST($2 AS bigint) * interval '1 millisecond'
 WHERE owner = $1 AND expires_at > now()
RETURNING name
