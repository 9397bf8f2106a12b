-- Optimistic read (4 columns): the version of the row with key $1 and the
-- values of the requested columns as text (NULL stays NULL). No lock is taken.
SELECT CAST({version} AS INTEGER), CAST({c1} AS TEXT), CAST({c2} AS TEXT), CAST({c3} AS TEXT), CAST({c4} AS TEXT) FROM {table} WHERE {key} = $1
