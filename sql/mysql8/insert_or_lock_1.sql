-- Row guard, insert-first dedup (1 extra column): inserts the row with key $1
-- (and the extra columns' values $2..), or, when a row with that key exists, takes
-- an exclusive lock on it: ON DUPLICATE KEY UPDATE locks the duplicate row X at once
-- (a failed plain INSERT would take a shared lock first, and two such waiters deadlock
-- when both then ask for the exclusive lock). The update assigns the key to itself, so
-- the row does not change; on the way it records the existing row's key in the session
-- variable read by insert_or_lock_result.sql (affected rows cannot tell: with
-- CLIENT_FOUND_ROWS an insert and an unchanged duplicate both count 1).
INSERT INTO {table} ({key}, {c1}) VALUES ($1, $2)
  ON DUPLICATE KEY UPDATE {key} = (@dblock_insert_or_lock := {key})
