-- database::migrate with migrate_options::lock_tables = unlogged (`dblock migrate
-- --lock-tables unlogged`), under the migration lock: the lock tables stop writing WAL.
-- A grant then commits without a WAL flush; a server crash (or an immediate shutdown, or a
-- failover: standbys never receive unlogged rows) empties the three tables, so every lock
-- is free afterwards and each holder learns it at its next renewal.
-- Fences must still grow across such a crash, although the rows that carried them are
-- gone and dblock_fence_seq may hand out again values whose WAL record was never flushed.
-- So a fence becomes epoch * 2^40 + a value of dblock_fence_volatile_seq, with the epoch a
-- row of a LOGGED table, raised once per server start: the first fence a started server draws
-- sees the stored start time differ, raises the epoch and commits that write with a WAL
-- flush before any fence of the new epoch can be seen (a commit is visible only after its
-- flush). A timeline change (a promoted standby, which may lack the last raises of the old
-- primary) raises it by 64 instead of 1. The first epoch is the current timeline + 1: above
-- every timeline * 2^40 fence of the logged schema (migration 0007).
-- dblock_fence_volatile_seq is itself unlogged from PostgreSQL 15 on (CREATE/ALTER SEQUENCE
-- ... UNLOGGED): a logged sequence writes a WAL record every 32 values, and the commit that
-- carries it waits for a flush, which is what unlogged tables are chosen to avoid. A crash
-- resets it to 1; the epoch, raised after every start, keeps the fences above the old ones.
-- Idempotent: the epoch row is created once, the function replaced, and ALTER TABLE SET
-- UNLOGGED leaves an unlogged table as it is (it rewrites a logged one, holding an ACCESS
-- EXCLUSIVE lock on it meanwhile).
CREATE TABLE IF NOT EXISTS dblock_fence_epoch (
  id             integer     PRIMARY KEY CHECK (id = 1),
  epoch          bigint      NOT NULL,
  timeline       bigint      NOT NULL,
  server_started timestamptz NOT NULL
);

CREATE SEQUENCE IF NOT EXISTS dblock_fence_volatile_seq MAXVALUE 1099511627775;

DO $do$
BEGIN
  IF CAST(current_setting('server_version_num') AS integer) >= 150000 THEN
    EXECUTE 'ALTER SEQUENCE dblock_fence_volatile_seq SET UNLOGGED';
  END IF;
END
$do$;

INSERT INTO dblock_fence_epoch (id, epoch, timeline, server_started)
SELECT 1, t.timeline + 1, t.timeline, pg_postmaster_start_time()
  FROM (SELECT CAST(CAST('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS bit(32)) AS bigint)
               AS timeline) AS t
ON CONFLICT (id) DO NOTHING;

-- The next fence, from the epoch. One primary-key read per fence while the server runs;
-- the first fence after a start also writes the epoch row. The UPDATE of a concurrent first
-- fence waits for the row, then finds it already raised (READ COMMITTED re-checks its WHERE)
-- and reads the new epoch.
CREATE OR REPLACE FUNCTION dblock_next_fence() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_epoch bigint;
  v_timeline bigint;
BEGIN
  SELECT e.epoch INTO v_epoch FROM dblock_fence_epoch e
   WHERE e.id = 1 AND e.server_started = pg_postmaster_start_time();
  IF NOT FOUND THEN
    v_timeline = CAST(CAST('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS bit(32)) AS bigint);
    UPDATE dblock_fence_epoch e
       SET epoch = e.epoch + CASE WHEN e.timeline = v_timeline THEN 1 ELSE 64 END,
           timeline = v_timeline, server_started = pg_postmaster_start_time()
     WHERE e.id = 1 AND e.server_started <> pg_postmaster_start_time()
    RETURNING e.epoch INTO v_epoch;
    IF NOT FOUND THEN
      SELECT e.epoch INTO v_epoch FROM dblock_fence_epoch e WHERE e.id = 1;
    END IF;
  END IF;
  RETURN v_epoch * 1099511627776 + nextval('dblock_fence_volatile_seq');
END
$fn$;

ALTER TABLE dblock_locks SET UNLOGGED;
ALTER TABLE dblock_lock_waiters SET UNLOGGED;
ALTER TABLE dblock_lock_holders SET UNLOGGED;
