-- 1 when the migration history table exists in the search path, else 0.
SELECT CASE WHEN to_regclass('dblock_schema_migrations') IS NULL THEN 0 ELSE 1 END
