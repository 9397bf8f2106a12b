-- Row guard, insert-first dedup: 0 = the row was inserted, 1 = a row with key $1 existed
-- and is now locked, 2 = the insert collided on another unique index (an error).
SELECT CASE WHEN @dblock_insert_or_lock IS NULL THEN 0
            WHEN @dblock_insert_or_lock = $1 THEN 1
            ELSE 2 END
