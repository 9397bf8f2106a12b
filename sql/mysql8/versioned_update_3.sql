-- Optimistic update (3 columns): sets the columns to $1..$3 and bumps the version,
-- only if the row with key $4 still has version $5. 1 affected row = applied,
-- 0 = conflict (the version moved on, or the row is gone). The version bump
-- always changes the row, so the count is right with or without CLIENT_FOUND_ROWS.
UPDATE {table} SET {c1} = $1, {c2} = $2, {c3} = $3, {version} = {version} + 1
 WHERE {key} = $4 AND {version} = $5
