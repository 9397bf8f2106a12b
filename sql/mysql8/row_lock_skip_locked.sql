-- Row guard, SKIP LOCKED: locks the rows whose key equals $1 that no other transaction
-- holds, and skips the others without waiting. None returned: row_count.sql tells
-- "all held by others" (busy) from "no such row" (not found).
SELECT 1 FROM {table} WHERE {key} = $1 FOR UPDATE SKIP LOCKED
