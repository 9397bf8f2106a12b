-- Row guard, NOWAIT: locks the rows whose key equals $1, or fails at once with
-- lock-not-available (55P03, inside a savepoint so the transaction survives)
-- when another transaction holds one of them.
SELECT 1 FROM {table} WHERE {key} = $1 FOR UPDATE NOWAIT
