-- Row guard, bounded wait: puts back the innodb_lock_wait_timeout saved by
-- lock_wait_timeout_set.sql.
SET SESSION innodb_lock_wait_timeout = @dblock_lock_wait_timeout
