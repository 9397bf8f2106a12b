-- In the caller's transaction: the hold of name $1, owner $2, slot $3, fence $4 if it is
-- still ours and unexpired, locked against its release or takeover until that transaction ends
-- (read-write lock or semaphore permit; lease::verify_in).
SELECT fence FROM dblock_lock_holders
 WHERE name = $1 AND owner = $2 AND slot = CAST($3 AS bigint) AND fence = CAST($4 AS bigint) AND expires_at > clock_timestamp()
   FOR SHARE
