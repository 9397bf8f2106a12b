-- Before lock_line_join.sql outside a caller's transaction: the ticket's commit goes to the WAL
-- without an fsync, and lock_line_join_flushed.sql sets the connection back right after it. A
-- ticket is the waiter's place, not a grant: a crash that loses it only loses that place, and
-- on SQLite a crash of the machine ends every waiting process with it. WAL frames are appended
-- in order and recovery keeps a prefix of them, so the next durable commit (the release that
-- hands the lock to this ticket, say) makes the ticket durable with it. Spares the releasing
-- holder a wait for the write lock behind the fsync of every rejoining waiter.
PRAGMA synchronous = NORMAL
