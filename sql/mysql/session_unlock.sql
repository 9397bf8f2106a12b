-- Releases the named lock $1 (same qualification as session_lock_wait); 1 when it was held.
SELECT RELEASE_LOCK(SHA2(CONCAT(DATABASE(), '/', $1), 256))
