-- Bootstrap of the migration runner: the history it records every migration in.
-- Runs under the migration session lock (GET_LOCK), before migration 0001.
CREATE TABLE IF NOT EXISTS dblock_schema_migrations (
  scope      VARBINARY(64)  NOT NULL,
  version    INT            NOT NULL,
  name       VARCHAR(255)   NOT NULL,
  checksum   CHAR(64)       CHARACTER SET ascii NOT NULL,
  applied_at DATETIME(6)    NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  PRIMARY KEY (scope, version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
