-- Run once on the reaper's own connection when reaper_options::async_commit is on: its
-- batches commit to the WAL without waiting for an fsync. A crash or power loss can lose
-- only the last batches' deletions of expired rows (they are reaped again). WAL frames are
-- appended in order and recovery keeps a prefix of them, so any later durable commit (every
-- other dblock connection runs synchronous = FULL, connect.sql) makes these deletions
-- durable with it: nothing later can survive a batch that was lost.
PRAGMA synchronous = NORMAL
