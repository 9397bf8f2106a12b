-- Records one applied migration: $1 scope, $2 version, $3 name, $4 SHA-256 hex.
INSERT INTO dblock_schema_migrations (scope, version, name, checksum) VALUES ($1, $2, $3, $4)
