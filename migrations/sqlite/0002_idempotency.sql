-- dblock schema 0002 (SQLite): idempotency keys for orders and payments.
-- Bodies are BLOB (byte-exact); times are INTEGER ms since the epoch (server clock).
CREATE TABLE IF NOT EXISTS dblock_idempotency (
  scope            TEXT    NOT NULL CHECK (length(CAST(scope AS BLOB)) BETWEEN 1 AND 64),
  idem_key         TEXT    NOT NULL CHECK (length(CAST(idem_key AS BLOB)) BETWEEN 1 AND 255),
  fingerprint      TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
  owner            TEXT,
  attempt          INTEGER NOT NULL DEFAULT 1 CHECK (attempt > 0),
  lease_expires_at INTEGER,
  recovery_point   TEXT,
  response_code    INTEGER,
  response_body    BLOB,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (scope, idem_key)
);
CREATE INDEX IF NOT EXISTS dblock_idempotency_expires_at ON dblock_idempotency (expires_at);
CREATE INDEX IF NOT EXISTS dblock_idempotency_status ON dblock_idempotency (status, scope);
