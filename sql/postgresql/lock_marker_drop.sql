-- Frees the liveness marker of owner $1 (lock_marker_take.sql) when its session ends, if this
-- connection holds it (a connection replaced meanwhile holds nothing, and an unlock of a
-- lock not held would raise a WARNING).
SELECT pg_advisory_unlock(1684171887, hashtext(CAST($1 AS text))) AS dropped
 WHERE EXISTS (SELECT 1 FROM pg_locks
                WHERE pid = pg_backend_pid() AND locktype = 'advisory' AND granted
                  AND classid = 1684171887 AND objsubid = 2
                  AND objid = CAST(CAST(hashtext(CAST($1 AS text)) AS bigint) & 4294967295 AS oid))
