-- The migration lock in pooler mode (?pooler=transaction): a transaction-level advisory
-- lock on the key $1 of the session lock 'dblock:migrate' (session_lock_try.sql), taken
-- inside the migration's own transaction and freed by its COMMIT or ROLLBACK, so nothing
-- outlives the transaction on a pooled server connection. One key for both kinds: a
-- pooled and a direct migrator exclude each other. 1 = taken, 0 = busy.
SELECT CASE WHEN pg_try_advisory_xact_lock($1) THEN 1 ELSE 0 END
