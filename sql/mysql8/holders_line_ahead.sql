-- Inside a grant's transaction: how many live wait-line tickets of name $1 are below the
-- line bound $2 (the maximum bigint for a try without a ticket, the waiter's own ticket for
-- its try). A fresh grant is made only when none is: first come, first served, and a waiting
-- writer keeps new readers out.
SELECT COUNT(*) FROM dblock_lock_waiters WHERE name = $1 AND ticket < CAST($2 AS SIGNED) AND expires_at > UTC_TIMESTAMP(6)
