-- The live locks of owner $1 (after a renewal matched fewer rows than expected).
SELECT name FROM dblock_locks WHERE owner = $1 AND expires_at > UTC_TIMESTAMP(6)
