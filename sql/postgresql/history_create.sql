-- Bootstrap of the migration runner: the history it records every migration in.
-- Runs under the migration session lock, before migration 0001.
CREATE TABLE IF NOT EXISTS dblock_schema_migrations (
  scope      varchar(64)  NOT NULL,
  version    integer      NOT NULL,
  name       varchar(255) NOT NULL,
  checksum   char(64)     NOT NULL,
  applied_at timestamptz  NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, version)
);
