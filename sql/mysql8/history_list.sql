-- Applied migrations of one scope ($1), oldest first.
SELECT version, name, checksum FROM dblock_schema_migrations WHERE scope = $1 ORDER BY version
