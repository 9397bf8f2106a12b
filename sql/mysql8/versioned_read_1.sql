-- Optimistic read (1 column): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS SIGNED), CAST({c1} AS CHAR) FROM {table} WHERE {key} = $1
