-- dblock schema 0014 (MariaDB): a release hands a contended lease lock to the head of its
-- wait line in its own commit (sql/mysql/lock_hand_off.sql). Without it a contended name
-- changes hands in two durable commits (the holder's delete, then the waiter's own grant
-- after it looked again); with it, in one, and the waiter only reads its grant
-- (lock_handed.sql).
--  - A ticket carries the grant its waiter asked for: grant_ttl_ms (the lease plus the lock
--    delay; 0 marks a waiter nobody may hand a lease row, a read-write lock's or semaphore's:
--    they share the line table), holder, lock_delay_ms.
--  - dblock_locks.ticket names the ticket a handed grant was made for: the waiter's try with
--    that ticket as its line bound is a grant, not a re-entry (holds stay as they are).
ALTER TABLE dblock_locks ADD COLUMN IF NOT EXISTS ticket BIGINT NULL;
ALTER TABLE dblock_lock_waiters
  ADD COLUMN IF NOT EXISTS grant_ttl_ms  BIGINT       NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS holder        VARCHAR(255) NOT NULL DEFAULT '',
  ADD COLUMN IF NOT EXISTS lock_delay_ms BIGINT       NOT NULL DEFAULT 0;
