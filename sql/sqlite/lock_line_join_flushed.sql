-- After lock_line_join_unflushed.sql and the ticket's insert: every later commit of the
-- connection waits for its fsync again (connect.sql's setting).
PRAGMA synchronous = FULL
