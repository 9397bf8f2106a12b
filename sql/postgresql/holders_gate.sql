-- Inside a grant's transaction (read-write lock or semaphore $1): waits for and takes the
-- name's grant lock, a transaction-scoped advisory lock (1684171884 'dblk'+1, hashtext(name);
-- another class than the lease lock's), held until the commit. Grants of one name are so
-- serialized, and each later statement of the transaction (READ COMMITTED: a new snapshot per
-- statement) sees every earlier grant committed.
SELECT CAST(pg_advisory_xact_lock(1684171884, hashtext(CAST($1 AS text))) AS text)
