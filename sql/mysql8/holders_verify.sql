-- In the caller's transaction: the hold of name $1, owner $2, slot $3, fence $4 if it is
-- still ours and unexpired, locked against its release or takeover until that transaction ends
-- (read-write lock or semaphore permit; lease::verify_in).
SELECT fence FROM dblock_lock_holders
 WHERE name = $1 AND owner = $2 AND slot = CAST($3 AS SIGNED) AND fence = CAST($4 AS SIGNED) AND expires_at > UTC_TIMESTAMP(6)
   FOR UPDATE
