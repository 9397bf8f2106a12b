-- Optimistic read (2 columns): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS SIGNED), CAST({c1} AS CHAR), CAST({c2} AS CHAR) FROM {table} WHERE {key} = $1
