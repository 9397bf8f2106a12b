-- Optimistic update (4 columns): sets the columns to $1..$4 and bumps the version,
-- only if the row with key $5 still has version $6. 1 affected row = applied,
-- 0 = conflict (the version moved on, or the row is gone). The version bump
-- always changes the row, so the count is right with or without CLIENT_FOUND_ROWS.
UPDATE {table} SET {c1} = $1, {c2} = $2, {c3} = $3, {c4} = $4, {version} = {version} + 1
 WHERE {key} = $5 AND {version} = $6
