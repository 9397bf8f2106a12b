-- Reaper: deletes up to $1 idempotency records past their retention, oldest first,
-- except an in-progress attempt whose lease is still live. Changes = deleted.
DELETE FROM dblock_idempotency
 WHERE rowid IN (SELECT rowid FROM dblock_idempotency
                  WHERE expires_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
                    AND (status <> 'in_progress' OR lease_expires_at IS NULL
                         OR lease_expires_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))
                  ORDER BY expires_at LIMIT $1)
