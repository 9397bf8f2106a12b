-- guard.verify_in(tx): inside the caller's transaction, locks the lock row FOR SHARE
-- if it is still ours with the same fence and not expired by the server's clock
-- (clock_timestamp(): now() is the transaction's start). The share lock blocks a
-- takeover until the caller commits. No row = the lock is no longer held.
SELECT fence FROM dblock_locks
 WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > clock_timestamp()
   FOR SHARE
