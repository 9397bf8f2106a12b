-- Inside a grant's transaction, after holders_gate.sql: deletes the holds of name $1 that
-- expired (their lease plus its lock delay ran out on the server's clock): takeover. A live
-- row is never touched (its holder's renewal keeps expires_at in the future).
DELETE FROM dblock_lock_holders WHERE name = $1 AND expires_at <= CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
