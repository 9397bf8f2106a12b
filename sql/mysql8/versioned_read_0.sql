-- Optimistic read (0 columns): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS SIGNED) FROM {table} WHERE {key} = $1
