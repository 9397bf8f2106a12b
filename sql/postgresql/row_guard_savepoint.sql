-- Row guard: PostgreSQL aborts the whole transaction on any error, so a NOWAIT or
-- bounded lock attempt runs inside this savepoint; "busy" rolls back to it and the
-- caller's transaction goes on.
SAVEPOINT dblock_row_guard
