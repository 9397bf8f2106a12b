-- Optimistic update (1 column): sets the columns to $1..$1 and bumps the version,
-- only if the row with key $2 still has version $3. 1 affected row = applied,
-- 0 = conflict (the version moved on, or the row is gone). The version bump
-- always changes the row, so the count is right with or without CLIENT_FOUND_ROWS.
UPDATE {table} SET {c1} = $1, {version} = {version} + 1
 WHERE {key} = $2 AND {version} = $3
