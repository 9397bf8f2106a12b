-- 1 when this connection holds the session lock $1 (same name mapping as session_lock_try).
SELECT IF(IS_USED_LOCK(IF(CHAR_LENGTH(CONCAT(DATABASE(), '/', $1)) <= 64, CONCAT(DATABASE(), '/', $1),
                          SHA2(CONCAT(DATABASE(), '/', $1), 256))) = CONNECTION_ID(), 1, 0)
