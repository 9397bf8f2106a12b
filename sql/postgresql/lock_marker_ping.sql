-- The liveness heartbeat on the connection that holds the markers: an answer proves the
-- connection was alive when the server read it. It names the server connection (backend pid
-- @ postmaster start): a different name than when the markers were taken means the client
-- library reconnected behind dblock's back, and the markers are gone. Empty on a standby
-- (a marker there would not guard the rows of the primary).
SELECT CASE WHEN pg_is_in_recovery() THEN '' ELSE CAST(pg_backend_pid() AS text) || '@' || CAST(pg_postmaster_start_time() AS text) END AS server_connection
