-- Session lock (ephemeral): GET_LOCK held by this connection until RELEASE_LOCK or until
-- the connection ends. Lock names are server-wide and at most 64 characters, so the
-- name is qualified with the current database, and a qualified name over 64 characters
-- is replaced by its SHA-256 (64 hex characters; collisions are negligible, and could
-- only make two names contend, never let two holders in). 1 = taken, 0 = busy.
SELECT GET_LOCK(IF(CHAR_LENGTH(CONCAT(DATABASE(), '/', $1)) <= 64, CONCAT(DATABASE(), '/', $1),
                   SHA2(CONCAT(DATABASE(), '/', $1), 256)), 0)
