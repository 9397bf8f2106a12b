-- Reaper: deletes up to $1 idempotency records past their retention, oldest first,
-- except an in-progress attempt whose lease is still live. Rows affected = deleted.
DELETE FROM dblock_idempotency
 WHERE expires_at < UTC_TIMESTAMP(6)
   AND (status <> 'in_progress' OR lease_expires_at IS NULL OR lease_expires_at < UTC_TIMESTAMP(6))
 ORDER BY expires_at
 LIMIT $1
