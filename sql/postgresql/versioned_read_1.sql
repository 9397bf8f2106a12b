-- Optimistic read (1 column): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS bigint), CAST({c1} AS text) FROM {table} WHERE {key} = $1
