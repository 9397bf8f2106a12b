-- Fenced write (4 columns): sets the columns to $1..$4 and the fence column to
-- the writer's fencing token $6, only if the row with key $5 was last written with a
-- token no larger than $6 (or never: NULL). A stale lock holder, whose token is
-- smaller than the one already recorded, changes nothing. 1 = applied, 0 = rejected.
UPDATE {table} SET {c1} = $1, {c2} = $2, {c3} = $3, {c4} = $4, {fence} = $6
 WHERE {key} = $5 AND ({fence} IS NULL OR {fence} <= $6)
