-- 1 when owner $1 holds the unexpired migration lease, else 0.
SELECT COUNT(*) FROM dblock_migration_lease WHERE id = 1 AND owner = $1 AND expires_at > UTC_TIMESTAMP(6)
