-- The liveness heartbeat on the connection that holds the markers: an answer proves the
-- connection was alive when the server read it. It names the server connection (connection
-- id @ host/port): a different name than when the markers were taken means the connection
-- was replaced, and the markers are gone.
SELECT CONCAT(CONNECTION_ID(), '@', @@hostname, '/', @@port) AS server_connection
