-- Connection-scoped named lock ($1), waiting up to $2 seconds server-side; 1 when taken.
-- GET_LOCK names are server-wide, so the name is qualified by the current database and
-- hashed to exactly 64 characters (the name length limit).
SELECT GET_LOCK(SHA2(CONCAT(DATABASE(), '/', $1), 256), $2)
