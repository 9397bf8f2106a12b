-- Row guard, insert-first dedup: clears the session variable that insert_or_lock_N.sql
-- sets only when the row already existed.
SET @dblock_insert_or_lock = NULL
