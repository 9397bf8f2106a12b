-- Row guard, bounded wait: puts back the lock_timeout read by lock_timeout_set.sql
-- ($1), for the rest of the transaction.
SELECT set_config('lock_timeout', $1, true)
