-- Optimistic update (2 columns): sets the columns to $1..$2 and bumps the version,
-- only if the row with key $3 still has version $4. 1 affected row = applied,
-- 0 = conflict (the version moved on, or the row is gone). The version bump
-- always changes the row, so the count is right with or without CLIENT_FOUND_ROWS.
UPDATE {table} SET {c1} = $1, {c2} = $2, {version} = {version} + 1
 WHERE {key} = $3 AND {version} = $4
