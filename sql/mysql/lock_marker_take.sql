-- Takes the liveness marker of lease-session owner $1 on this connection (the process's
-- background connection): the user lock 'dblock:o:<owner>' (session locks use other names:
-- sql/mysql/session_lock_try.sql). The server frees it the moment the connection ends
-- (process killed, KILL), which is what a waiter's lock_probe_marker.sql and
-- lock_reclaim.sql look for. 1 = taken, 0 or NULL = not; -1 = this server is a Galera node
-- (wsrep_on), where user locks are local to one node: no marker, the TTL rule only. Then
-- the server connection's name, as lock_marker_ping.sql.
SELECT IF(@@global.wsrep_on, -1, GET_LOCK(CONCAT('dblock:o:', $1), 0)) AS taken,
       CONCAT(CONNECTION_ID(), '@', @@hostname, '/', @@port) AS server_connection
