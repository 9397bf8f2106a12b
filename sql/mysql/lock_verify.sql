-- guard.verify_in(tx): inside the caller's transaction, share-locks the lock row if it
-- is still ours with the same fence and not expired by the server's clock; the share
-- lock blocks a takeover until the caller commits. No row = no longer held.
SELECT fence FROM dblock_locks
 WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > UTC_TIMESTAMP(6)
  LOCK IN SHARE MODE
