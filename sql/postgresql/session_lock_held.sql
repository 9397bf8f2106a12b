-- 1 when this connection holds the session-level advisory lock on key $1 (pg_locks
-- splits an int8 key into classid = high 32 bits, objid = low 32 bits, objsubid = 1).
SELECT COUNT(*) FROM pg_locks
 WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = pg_backend_pid()
   AND ((CAST(classid AS bigint) << 32) | CAST(objid AS bigint)) = $1
