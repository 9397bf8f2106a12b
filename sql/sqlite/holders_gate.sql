-- Inside a grant's transaction (read-write lock or semaphore $1): nothing to take. The
-- transaction began with BEGIN IMMEDIATE and holds SQLite's one write lock: grants are
-- serialized. The name is only bound, so that every dialect takes the same parameters.
SELECT length($1)
