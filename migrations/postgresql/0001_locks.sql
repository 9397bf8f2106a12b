-- dblock schema 0001 (PostgreSQL): the lease-lock table and the fencing sequence.
-- One row per held lease lock. Expiry is always compared with the server's now().

-- Fencing tokens: strictly increasing across release, reaping and restart
-- (sequences are WAL-logged; after a crash they may skip ahead, never go back).
CREATE SEQUENCE IF NOT EXISTS dblock_fence_seq AS bigint START WITH 1 MINVALUE 1 NO CYCLE;

CREATE TABLE IF NOT EXISTS dblock_locks (
  name        text        NOT NULL PRIMARY KEY CHECK (octet_length(name) BETWEEN 1 AND 255),
  owner       varchar(32) NOT NULL,              -- random 128-bit session token, hex
  holds       integer     NOT NULL CHECK (holds > 0),  -- reentrant count
  fence       bigint      NOT NULL,              -- fencing token of the current grant
  acquired_at timestamptz NOT NULL,
  expires_at  timestamptz NOT NULL,
  holder      varchar(255) NOT NULL DEFAULT ''   -- for humans: host, pid
);

-- The reaper scans by expiry; the watchdog renews by owner.
CREATE INDEX IF NOT EXISTS dblock_locks_expires_at ON dblock_locks (expires_at);
CREATE INDEX IF NOT EXISTS dblock_locks_owner ON dblock_locks (owner);
