-- Row guard: 1 when the server rolls back the whole transaction on a lock wait
-- timeout (innodb_rollback_on_timeout), 0 when only the statement is undone (default).
-- Read after a 1205, to know whether "busy" can be a value or the transaction is gone.
SELECT @@innodb_rollback_on_timeout
