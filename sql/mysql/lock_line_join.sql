-- Takes a ticket in the wait line of lease lock $1 for owner $2, live for $3 ms (renewed by
-- lock_line_renew.sql with the owner's leases). Returns the ticket: grants of the name go to
-- the lowest live ticket (lock_acquire.sql's line bound).
-- $4, $5, $6 = the grant a release may hand this ticket (lock_release_to_line.sql): its TTL in ms
-- (the lease plus the lock delay; 0 = never hand this ticket a lease row: a read-write lock's
-- or semaphore's waiter), holder text, lock delay in ms.
INSERT INTO dblock_lock_waiters (name, owner, expires_at, grant_ttl_ms, holder, lock_delay_ms)
VALUES ($1, $2, UTC_TIMESTAMP(6) + INTERVAL (CAST($3 AS SIGNED) * 1000) MICROSECOND, $4, $5, $6)
RETURNING ticket
