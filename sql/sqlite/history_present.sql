-- 1 when the migration history table exists, else 0.
SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'dblock_schema_migrations'
