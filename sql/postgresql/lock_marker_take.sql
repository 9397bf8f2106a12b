-- Takes the liveness marker of lease-session owner $1 on this connection (the process's
-- background connection): a session-level advisory lock in the two-int key space, class
-- 1684171887 ('dblo'), key hashtext(owner). Session locks and applications use one-bigint
-- keys, the grant lock class 1684171883 ('dblk'): no key is shared. The server frees it the
-- moment the connection ends (process killed, connection terminated), which is what a
-- waiter's lock_probe_marker.sql and lock_reclaim.sql look for. 1 = taken, 0 = another
-- connection holds the key (a hashtext collision: the caller picks another owner token), or
-- this server is a standby; then the server connection's name, as lock_marker_ping.sql.
SELECT CASE WHEN pg_is_in_recovery() THEN 0
            WHEN pg_try_advisory_lock(1684171887, hashtext(CAST($1 AS text))) THEN 1 ELSE 0 END AS taken,
       CASE WHEN pg_is_in_recovery() THEN '' ELSE CAST(pg_backend_pid() AS text) || '@' || CAST(pg_postmaster_start_time() AS text) END AS server_connection
