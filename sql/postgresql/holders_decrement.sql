-- Releases one of several holds of read-write lock $1 by owner $2, grant $3 (its fence);
-- $4 = 1 when the hold released is a write hold (the writer gives its write hold back and stays
-- a reader while read holds remain), 0 for a read hold. Nothing matched = no longer ours.
UPDATE dblock_lock_holders SET holds = holds - 1, write_holds = write_holds - CAST($4 AS bigint)
 WHERE name = $1 AND owner = $2 AND slot = 0 AND fence = CAST($3 AS bigint) AND holds > 1 AND write_holds >= CAST($4 AS bigint)
