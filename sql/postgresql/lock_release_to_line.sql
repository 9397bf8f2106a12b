-- Final release of lease lock $1 by owner $2, grant $3 (its fence), that hands the name to
-- the head of its wait line in the same commit (dblock_lock_release_to_line_grant, migrations
-- 0014, 0015 and 0017): the row becomes the grant the head's ticket asked for, with a new
-- fence, and the ticket is deleted; with nobody in line the row is deleted. NOTIFY
-- dblock_release either way: a hand-off's payload names the head's owner, ticket and fence, a
-- delete's is the name. outcome: 0 = the row was no longer this grant (nothing changed),
-- 1 = deleted, 2 = handed, with next_owner, next_ticket and next_fence saying to whom (the
-- releasing process passes it to a waiter of its own, when the statement was not sent inside a
-- transaction). Sent only for a lease that was itself granted through the line: a name with
-- waiters then. Always waits for its WAL flush: it writes a grant.
SELECT outcome, next_owner, next_ticket, next_fence
  FROM dblock_lock_release_to_line_grant(CAST($1 AS text), CAST($2 AS text), CAST($3 AS bigint))
