-- Fenced write (3 columns): sets the columns to $1..$3 and the fence column to
-- the writer's fencing token $5, only if the row with key $4 was last written with a
-- token no larger than $5 (or never: NULL). A stale lock holder, whose token is
-- smaller than the one already recorded, changes nothing. 1 = applied, 0 = rejected.
UPDATE {table} SET {c1} = $1, {c2} = $2, {c3} = $3, {fence} = $5
 WHERE {key} = $4 AND ({fence} IS NULL OR {fence} <= $5)
