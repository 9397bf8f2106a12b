-- Run once on the reaper's own connection: READ COMMITTED, so its range deletes take
-- record locks only (no gap/next-key locks that would block concurrent acquires).
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED
