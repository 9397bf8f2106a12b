-- dblock schema 0005 (MySQL 8.0): lock delay. A lease that ran out unreleased can be
-- taken over only the holder's lock delay after its end (session_options::lock_delay): the
-- holder asks the server to keep its row for TTL + lock delay, and stores the delay here so
-- that `dblock locks` can tell the lease's end (expires_at - lock_delay_ms) from the moment
-- of takeover (expires_at). Existing rows get 0 (no delay).
ALTER TABLE dblock_locks ADD COLUMN lock_delay_ms BIGINT NOT NULL DEFAULT 0
  CHECK (lock_delay_ms >= 0);
