-- Releases the session-level advisory lock on key $1; 1 when this connection held it.
SELECT CASE WHEN pg_advisory_unlock($1) THEN 1 ELSE 0 END
