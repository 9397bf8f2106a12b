-- database::migrate with migrate_options::lock_tables = logged (`dblock migrate
-- --lock-tables logged`), under the migration lock: the lock tables write WAL again, so a
-- grant survives a crash and reaches standbys. Each ALTER rewrites an unlogged table under
-- an ACCESS EXCLUSIVE lock (and leaves a logged one as it is). Fences keep coming from the
-- epoch (lock_tables_unlogged.sql) if the tables were ever unlogged: going back to
-- timeline * 2^40 would hand out smaller fences than the epoch already did.
ALTER TABLE dblock_locks SET LOGGED;
ALTER TABLE dblock_lock_waiters SET LOGGED;
ALTER TABLE dblock_lock_holders SET LOGGED;
