-- Final release of lease lock $1 by owner $2, grant $3 (its fence), that hands the name to
-- the head of its wait line in the same commit (the stored function of migrations 0014, 0017
-- and 0018): the row becomes the grant the head's ticket asked for, with a new fence, and the
-- ticket is deleted; with nobody in line the row is deleted. One round trip, one commit.
-- $4 = 1: take the server lock 'dblock:h:' || SHA1(name) first and keep it past the commit
-- (the library passes 0 on a Galera node and inside a transaction it opened).
-- outcome: '0' = the row was no longer this grant (nothing changed), '1' = deleted,
-- '2 <owner> <ticket> <fence> <locked>' = handed to that ticket of that owner with that fence
-- (the releasing process passes it to a waiter of its own); locked 1: the hand-off was made
-- under the server lock, recorded in locked_ticket, and the caller frees the lock
-- (lock_hand_off_unlock.sql) once this answer arrived. own_commit: 1 when the statement commits
-- on its own as it ends - autocommit is on (MySQL 8.0 has no
-- @@in_transaction: a transaction the library began itself is known to it) - so the grant is committed when the answer arrives; only
-- then is it passed on. Sent only for a lease that was itself granted through the line: a name
-- with waiters then.
SELECT dblock_lock_release_to_line_locked($1, $2, CAST($3 AS SIGNED), CAST($4 AS SIGNED)) AS outcome,
       CAST(@@autocommit = 1 AS SIGNED) AS own_commit
