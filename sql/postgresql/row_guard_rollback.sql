-- Row guard: undoes a failed NOWAIT or bounded lock attempt (and its SET LOCAL
-- lock_timeout), so the caller's transaction is usable again.
ROLLBACK TO SAVEPOINT dblock_row_guard
