-- Row guard, insert-first dedup (3 extra columns): inserts the row with key $1
-- (and the extra columns' values $2..); 1 affected row = inserted, 0 = a row with
-- that key exists. The conflict target names the key, so a conflict on any other
-- unique index is still an error, never silently ignored.
-- A concurrent uncommitted insert of the same key makes this wait for that
-- transaction; the existing row is then locked with row_lock.sql.
INSERT INTO {table} ({key}, {c1}, {c2}, {c3}) VALUES ($1, $2, $3, $4)
  ON CONFLICT ({key}) DO NOTHING
