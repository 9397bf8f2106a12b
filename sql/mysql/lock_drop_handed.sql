-- A waiter that stopped waiting gives back the grant a release handed its ticket $3 of lease
-- lock $1 (owner $2) meanwhile: its ticket was gone when it left the line. Deletes the row
-- only while it is still that hand-off with one hold (a re-entry by another thread of the
-- same session keeps it). 0 rows affected = nothing was handed.
DELETE FROM dblock_locks WHERE name = $1 AND owner = $2 AND ticket = CAST($3 AS SIGNED) AND holds = 1
