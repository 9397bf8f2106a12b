-- dblock schema 0014 (SQLite): a release hands a contended lease lock to the head of its
-- wait line in its own commit (sql/sqlite/lock_hand_off.sql). Without it a contended name
-- changes hands in two commits, two fsyncs (the holder's delete, then the waiter's own grant
-- after it looked again); with it, in one, and the waiter only reads its grant
-- (lock_handed.sql).
--  - A ticket carries the grant its waiter asked for: grant_ttl_ms (the lease plus the lock
--    delay; 0 marks a waiter nobody may hand a lease row, a read-write lock's or semaphore's:
--    they share the line table), holder, lock_delay_ms.
--  - dblock_locks.ticket names the ticket a handed grant was made for: the waiter's try with
--    that ticket as its line bound is a grant, not a re-entry (holds stay as they are).
ALTER TABLE dblock_locks ADD COLUMN ticket INTEGER;
ALTER TABLE dblock_lock_waiters ADD COLUMN grant_ttl_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE dblock_lock_waiters ADD COLUMN holder TEXT NOT NULL DEFAULT '';
ALTER TABLE dblock_lock_waiters ADD COLUMN lock_delay_ms INTEGER NOT NULL DEFAULT 0;
