-- Frees the liveness marker of owner $1 (lock_marker_take.sql) when its session ends.
SELECT RELEASE_LOCK(CONCAT('dblock:o:', $1)) AS dropped
