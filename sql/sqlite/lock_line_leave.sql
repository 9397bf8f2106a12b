-- Gives up ticket $1 of owner $2: granted by the waiter's own try, or a wait that timed out
-- or failed (a ticket handed a grant was deleted by that release). Ticket numbers are unique;
-- the table is keyed by (name, ticket), so this scans the line's tickets.
DELETE FROM dblock_lock_waiters WHERE ticket = $1 AND owner = $2
