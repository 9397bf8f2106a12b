-- After a release of lease lock $1 that answered locked 1 (lock_release_to_line.sql): frees
-- the server lock the release took before its hand-off, now that the release's commit has
-- returned. The head of the line waits for it (lock_handed_wait.sql). When this never arrives
-- (the connection broke), the server frees the lock as the connection ends.
SELECT RELEASE_LOCK(CONCAT('dblock:h:', SHA1($1))) AS freed
