-- What decides whether a committed grant survives a failover to a standby: this session's
-- synchronous_commit (the one dblock's grants commit with), synchronous_standby_names, and
-- one row per standby streaming from this server (none: one row with NULLs). sync_state is
-- NULL unless the role may read all statistics (superuser, pg_read_all_stats); the client
-- then judges from the names alone. Read-only; pg_stat_replication is readable by every role.
-- Columns: synchronous_commit, synchronous_standby_names, application_name, sync_state.
SELECT current_setting('synchronous_commit') AS synchronous_commit,
       current_setting('synchronous_standby_names') AS synchronous_standby_names,
       r.application_name, r.sync_state
  FROM (SELECT 1) AS one
  LEFT JOIN pg_stat_replication r ON true
