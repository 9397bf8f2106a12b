-- 1 when the migration history table exists in the current database, else 0.
SELECT COUNT(*) FROM information_schema.tables
 WHERE table_schema = DATABASE() AND table_name = 'dblock_schema_migrations'
