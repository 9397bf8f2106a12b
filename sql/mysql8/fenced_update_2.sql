-- Fenced write (2 columns): sets the columns to $1..$2 and the fence column to
-- the writer's fencing token $4, only if the row with key $3 was last written with a
-- token no larger than $4 (or never: NULL). A stale lock holder, whose token is
-- smaller than the one already recorded, changes nothing. 1 = applied, 0 = rejected.
UPDATE {table} SET {c1} = $1, {c2} = $2, {fence} = $4
 WHERE {key} = $3 AND ({fence} IS NULL OR {fence} <= $4)
