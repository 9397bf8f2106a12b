-- Row guard: how many rows have key $1, by a plain read that takes no lock
-- (run after SKIP LOCKED returned nothing, to tell busy from not found).
SELECT COUNT(*) FROM {table} WHERE {key} = $1
