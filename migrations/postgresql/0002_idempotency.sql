-- dblock schema 0002 (PostgreSQL): idempotency keys for orders and payments.
-- Bodies are bytea (byte-exact, never a JSON type that reorders keys).
CREATE TABLE IF NOT EXISTS dblock_idempotency (
  scope            varchar(64)  NOT NULL CHECK (octet_length(scope) BETWEEN 1 AND 64),
  idem_key         varchar(255) NOT NULL CHECK (octet_length(idem_key) BETWEEN 1 AND 255),
  fingerprint      char(64)     NOT NULL,        -- SHA-256 of the canonical request, hex
  status           varchar(16)  NOT NULL CHECK (status IN ('in_progress', 'completed', 'failed')),
  owner            char(32),                     -- owner of the current attempt
  attempt          integer      NOT NULL DEFAULT 1 CHECK (attempt > 0),
  lease_expires_at timestamptz,                  -- in_progress only
  recovery_point   varchar(255),
  response_code    integer,
  response_body    bytea,
  created_at       timestamptz  NOT NULL DEFAULT now(),
  updated_at       timestamptz  NOT NULL DEFAULT now(),
  expires_at       timestamptz  NOT NULL,        -- retention: treated as absent after this
  PRIMARY KEY (scope, idem_key)
);
CREATE INDEX IF NOT EXISTS dblock_idempotency_expires_at ON dblock_idempotency (expires_at);
CREATE INDEX IF NOT EXISTS dblock_idempotency_status ON dblock_idempotency (status, scope);
