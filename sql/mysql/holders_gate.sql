-- Inside a grant's transaction (read-write lock or semaphore $1): X-locks the name's row in
-- dblock_lock_gates (inserting it the first time), held until the commit. Grants of one name
-- are so serialized; holders_live.sql then reads the rows with a locking (current) read.
INSERT INTO dblock_lock_gates (name) VALUES ($1) ON DUPLICATE KEY UPDATE name = name
