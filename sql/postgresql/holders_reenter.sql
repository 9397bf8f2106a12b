-- Inside a grant's transaction: one more hold of read-write lock $1 by owner $2, who holds it
-- live: $3 = 1 for a write hold (a writer re-entering, or the only reader upgrading), 0 for a
-- read hold; fence $4 (the hold's own for a re-entry, a new one for an upgrade); the lease
-- renewed to $5 ms (lease + lock delay).
UPDATE dblock_lock_holders
   SET holds = holds + 1, write_holds = write_holds + CAST($3 AS bigint), fence = CAST($4 AS bigint), expires_at = now() + CAST($5 AS bigint) * interval '1 millisecond'
 WHERE name = $1 AND owner = $2 AND slot = 0 AND expires_at > now()
