-- Session-scoped advisory lock on a 64-bit key ($1); 1 when taken, 0 when busy.
-- Released by session_unlock or by the server when the connection ends.
SELECT CASE WHEN pg_try_advisory_lock($1) THEN 1 ELSE 0 END
