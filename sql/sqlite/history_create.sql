-- Bootstrap of the migration runner: the history it records every migration in.
-- Runs inside the run's BEGIN IMMEDIATE transaction, before migration 0001.
CREATE TABLE IF NOT EXISTS dblock_schema_migrations (
  scope      TEXT    NOT NULL CHECK (length(scope) BETWEEN 1 AND 64),
  version    INTEGER NOT NULL,
  name       TEXT    NOT NULL,
  checksum   TEXT    NOT NULL,
  applied_at INTEGER NOT NULL DEFAULT (CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)),
  PRIMARY KEY (scope, version)
);
