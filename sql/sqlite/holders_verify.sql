-- In the caller's transaction: the hold of name $1, owner $2, slot $3, fence $4 if it is
-- still ours and unexpired, locked against its release or takeover until that transaction ends
-- (read-write lock or semaphore permit; lease::verify_in).
SELECT fence FROM dblock_lock_holders
 WHERE name = $1 AND owner = $2 AND slot = $3 AND fence = $4 AND expires_at > CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
