-- Leaves the wait line of lease lock $1 (see lock_line_enter.sql): 1 when this connection
-- was at its head.
SELECT COALESCE(RELEASE_LOCK(CONCAT('dbq:', LEFT(SHA2(CONCAT(DATABASE(), '/', $1), 256), 60))), 0)
