-- Releases the session lock $1 (same name mapping as session_lock_try); 1 when held here.
SELECT COALESCE(RELEASE_LOCK(IF(CHAR_LENGTH(CONCAT(DATABASE(), '/', $1)) <= 64, CONCAT(DATABASE(), '/', $1),
                                SHA2(CONCAT(DATABASE(), '/', $1), 256))), 0)
