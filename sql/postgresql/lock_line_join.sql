-- Takes a ticket in the wait line of lease lock $1 for owner $2, live for $3 ms (renewed by
-- lock_renew.sql with the owner's leases). Returns the ticket: grants of the name go to the
-- lowest live ticket (lock_acquire.sql's line bound).
INSERT INTO dblock_lock_waiters (name, owner, expires_at)
VALUES (CAST($1 AS text), CAST($2 AS text), now() + CAST($3 AS bigint) * interval '1 millisecond')
RETURNING ticket
