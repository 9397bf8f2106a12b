-- lock_line_join.sql without waiting for the WAL flush: set_config('synchronous_commit',
-- 'off', true) lasts until the end of this statement's own implicit transaction, whose commit
-- reads it. Used only outside a caller's transaction. A ticket is the waiter's place, not a
-- grant: a crash that loses it only loses that place (the waiter's tries then pass the line
-- as if it had none ahead). A release that hands the lock to the ticket commits durably, and
-- its flush carries the ticket's earlier WAL with it. Spares the contended name's hand-off a
-- flush of every rejoining waiter queued before its own.
INSERT INTO dblock_lock_waiters (name, owner, expires_at, grant_ttl_ms, holder, lock_delay_ms)
VALUES (CAST($1 AS text), CAST($2 AS text), now() + CAST($3 AS bigint) * interval '1 millisecond',
        CAST($4 AS bigint), CAST($5 AS text), CAST($6 AS bigint))
RETURNING ticket, set_config('synchronous_commit', 'off', true) AS synchronous_commit
