-- Releases the session-scoped advisory lock on key $1; 1 when it was held.
SELECT CASE WHEN pg_advisory_unlock($1) THEN 1 ELSE 0 END
