-- Leader election: a resigning leader (owner $2, grant $3) removes its value of election $1
-- before it releases the lease; a later leader's value is left alone.
DELETE FROM dblock_elections WHERE name = $1 AND owner = $2 AND fence = CAST($3 AS SIGNED)
