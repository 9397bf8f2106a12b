-- dblock schema 0002 (MySQL 8.0.13+): idempotency keys for orders and payments.
-- Keys are VARBINARY (byte-exact, case-sensitive); bodies LONGBLOB (byte-exact).
-- Expression defaults are written in parentheses: MySQL 8.0 accepts a bare function as a
-- DATETIME default only for CURRENT_TIMESTAMP.
CREATE TABLE IF NOT EXISTS dblock_idempotency (
  scope            VARBINARY(64)  NOT NULL,
  idem_key         VARBINARY(255) NOT NULL,
  fingerprint      CHAR(64)       CHARACTER SET ascii NOT NULL,
  status           VARCHAR(16)    CHARACTER SET ascii NOT NULL,
  owner            CHAR(32)       CHARACTER SET ascii NULL,
  attempt          INT            NOT NULL DEFAULT 1,
  lease_expires_at DATETIME(6)    NULL,
  recovery_point   VARCHAR(255)   NULL,
  response_code    INT            NULL,
  response_body    LONGBLOB       NULL,
  created_at       DATETIME(6)    NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  updated_at       DATETIME(6)    NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
  expires_at       DATETIME(6)    NOT NULL,
  PRIMARY KEY (scope, idem_key),
  CHECK (status IN ('in_progress', 'completed', 'failed')),
  CHECK (attempt > 0),
  KEY dblock_idempotency_expires_at (expires_at),
  KEY dblock_idempotency_status (status, scope)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
