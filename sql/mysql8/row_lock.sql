-- Row guard, wait mode: locks every row of the table whose key equals $1 until the
-- caller's transaction ends, waiting as long as the server lets it for another holder.
-- One result row per locked row; none = no such row.
SELECT 1 FROM {table} WHERE {key} = $1 FOR UPDATE
