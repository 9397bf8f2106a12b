-- Row guard, insert-first dedup (0 extra columns): inserts the row with key $1
-- (and the extra columns' values $2..); 1 affected row = inserted, 0 = a row with
-- that key exists. The conflict target names the key, so a conflict on any other
-- unique index is still an error, never silently ignored.
-- Inside BEGIN IMMEDIATE the whole database is write-locked by this transaction,
-- so an existing row needs no further lock.
INSERT INTO {table} ({key}) VALUES ($1)
  ON CONFLICT ({key}) DO NOTHING
