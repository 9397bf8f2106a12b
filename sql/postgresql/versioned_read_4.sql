-- Optimistic read (4 columns): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS bigint), CAST({c1} AS text), CAST({c2} AS text), CAST({c3} AS text), CAST({c4} AS text) FROM {table} WHERE {key} = $1
