-- The live lease locks and holds of owner $1, after lock_renew_holders.sql matched fewer
-- rows than expected: name and slot (NULL for a lease lock).
SELECT name, CAST(NULL AS SIGNED) FROM dblock_locks WHERE owner = $1 AND expires_at > UTC_TIMESTAMP(6)
UNION ALL
SELECT name, slot FROM dblock_lock_holders WHERE owner = $1 AND expires_at > UTC_TIMESTAMP(6)
