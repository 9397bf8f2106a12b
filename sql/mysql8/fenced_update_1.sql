-- Fenced write (1 column): sets the columns to $1..$1 and the fence column to
-- the writer's fencing token $3, only if the row with key $2 was last written with a
-- token no larger than $3 (or never: NULL). A stale lock holder, whose token is
-- smaller than the one already recorded, changes nothing. 1 = applied, 0 = rejected.
UPDATE {table} SET {c1} = $1, {fence} = $3
 WHERE {key} = $2 AND ({fence} IS NULL OR {fence} <= $3)
