-- database::migrate with migrate_options::lock_tables = logged (`dblock migrate
-- --lock-tables logged`), under the migration lock: the lock tables write WAL again, so a
-- grant survives a crash and reaches standbys. Each ALTER rewrites an unlogged table under
-- an ACCESS EXCLUSIVE lock (and leaves a logged one as it is). Fences keep coming from the
-- epoch (lock_tables_unlogged.sql) if the tables were ever unlogged: going back to
-- timeline * 2^40 would hand out smaller fences than the epoch already did.
-- dblock_locks gets back the CHECK constraints lock_tables_unlogged.sql drops, under the
-- names migrations 0001 and 0005 gave them (each validated against the rows present).
ALTER TABLE dblock_locks SET LOGGED;
ALTER TABLE dblock_lock_waiters SET LOGGED;
ALTER TABLE dblock_lock_holders SET LOGGED;

DO $do$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                  WHERE conrelid = CAST('dblock_locks' AS regclass) AND conname = 'dblock_locks_name_check') THEN
    ALTER TABLE dblock_locks ADD CONSTRAINT dblock_locks_name_check CHECK (octet_length(name) BETWEEN 1 AND 255);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                  WHERE conrelid = CAST('dblock_locks' AS regclass) AND conname = 'dblock_locks_holds_check') THEN
    ALTER TABLE dblock_locks ADD CONSTRAINT dblock_locks_holds_check CHECK (holds > 0);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_constraint
                  WHERE conrelid = CAST('dblock_locks' AS regclass) AND conname = 'dblock_locks_lock_delay_ms_check') THEN
    ALTER TABLE dblock_locks ADD CONSTRAINT dblock_locks_lock_delay_ms_check CHECK (lock_delay_ms >= 0);
  END IF;
END
$do$;
