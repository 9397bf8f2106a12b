-- Takes a ticket in the wait line of lease lock $1 for owner $2, live for $3 ms (renewed by
-- lock_line_renew.sql with the owner's leases). Returns the ticket: grants of the name go to
-- the lowest live ticket (lock_acquire.sql's line bound). The number is the counter's next
-- (dblock_line_tickets, migration 0019; the trigger dblock_line_ticket_on_insert advances it):
-- never reused.
-- $4, $5, $6 = the grant a release may hand this ticket (lock_hand_off.sql): its TTL in ms
-- (the lease plus the lock delay; 0 = never hand this ticket a lease row: a read-write lock's
-- or semaphore's waiter), holder text, lock delay in ms.
INSERT INTO dblock_lock_waiters (name, ticket, owner, expires_at, grant_ttl_ms, holder, lock_delay_ms)
VALUES ($1, (SELECT last + 1 FROM dblock_line_tickets WHERE id = 1), $2,
        CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + $3, $4, $5, $6)
RETURNING ticket
