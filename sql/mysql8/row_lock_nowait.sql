-- Row guard, NOWAIT: locks the rows whose key equals $1, or fails at once with
-- lock-not-available (MySQL 8.0: 3572, MariaDB: 1205; the transaction stays open)
-- when another transaction holds one of them.
SELECT 1 FROM {table} WHERE {key} = $1 FOR UPDATE NOWAIT
