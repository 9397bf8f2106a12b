-- Row guard, bounded wait: FOR UPDATE WAIT n takes only a literal (no placeholder), so
-- the wait is set on the session instead: keep the current innodb_lock_wait_timeout
-- in a session variable, then set it to $1 whole seconds. Every right-hand side is
-- read before any assignment, so the saved value is the one before the change.
SET @dblock_lock_wait_timeout = @@SESSION.innodb_lock_wait_timeout,
    SESSION innodb_lock_wait_timeout = $1
