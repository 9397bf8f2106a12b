-- Leaves the wait line of lease lock $1 (see lock_line_enter.sql): 1 when this connection
-- was at its head.
SELECT CASE WHEN pg_advisory_unlock(1684171889, hashtext(CAST($1 AS text))) THEN 1 ELSE 0 END
