-- Takes the liveness marker of lease-session owner $1 on this connection (the process's
-- background connection): the user lock 'dblock:o:<owner>' (session locks use other names:
-- sql/mysql8/session_lock_try.sql). The server frees it the moment the connection ends
-- (process killed, KILL), which is what a waiter's lock_probe_marker.sql and
-- lock_reclaim.sql look for. 1 = taken, 0 or NULL = not; then the server connection's
-- name, as lock_marker_ping.sql. (MySQL 8.0 has no wsrep_on
-- unless it is a Galera build: a cluster is not detected here; docs/locks.md.)
SELECT GET_LOCK(CONCAT('dblock:o:', $1), 0) AS taken,
       CONCAT(CONNECTION_ID(), '@', @@hostname, '/', @@port) AS server_connection
