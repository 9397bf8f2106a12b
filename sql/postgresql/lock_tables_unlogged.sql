-- database::migrate with migrate_options::lock_tables = unlogged (`dblock migrate
-- --lock-tables unlogged`), under the migration lock: the lock tables stop writing WAL.
-- A grant then commits without a WAL flush; a server crash (or an immediate shutdown, or a
-- failover: standbys never receive unlogged rows) empties the three tables, so every lock
-- is free afterwards and each holder learns it at its next renewal.
-- Fences must still grow across such a crash, although the rows that carried them are
-- gone and dblock_fence_seq may hand out again values whose WAL record was never flushed.
-- So a fence becomes epoch * 2^40 + a value of dblock_fence_volatile_seq, with the epoch a
-- row of a LOGGED table, raised once after every reset of the unlogged data: the first
-- fence drawn after a reset raises the epoch and commits that write with a WAL flush before
-- any fence of the new epoch can be seen (a commit is visible only after its flush). A
-- reset is told by the UNLOGGED table dblock_fence_epoch_live, whose one row (the epoch in
-- force) a crash empties together with the lock tables and the sequence. A crash of a single
-- server process counts: the server then empties every unlogged table without restarting
-- itself (pg_postmaster_start_time() stays the same), so the start time cannot tell it.
-- A timeline change (a promoted standby, which may lack the last raises of the old
-- primary) raises it by 64 instead of 1. The first epoch is the current timeline + 1: above
-- every timeline * 2^40 fence of the logged schema (migration 0007).
-- dblock_fence_volatile_seq is itself unlogged from PostgreSQL 15 on (CREATE/ALTER SEQUENCE
-- ... UNLOGGED): a logged sequence writes a WAL record every 32 values, and the commit that
-- carries it waits for a flush, which is what unlogged tables are chosen to avoid. A crash
-- resets it to 1; the epoch, raised after every reset, keeps the fences above the old ones.
-- Idempotent: the epoch rows are created once, the functions replaced, and ALTER TABLE SET
-- UNLOGGED leaves an unlogged table as it is (it rewrites a logged one, holding an ACCESS
-- EXCLUSIVE lock on it meanwhile).
CREATE TABLE IF NOT EXISTS dblock_fence_epoch (
  id             integer     PRIMARY KEY CHECK (id = 1),
  epoch          bigint      NOT NULL,
  timeline       bigint      NOT NULL,
  server_started timestamptz NOT NULL
);

CREATE UNLOGGED TABLE IF NOT EXISTS dblock_fence_epoch_live (
  id    integer PRIMARY KEY,
  epoch bigint  NOT NULL
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

-- The epoch in force, read from dblock_fence_epoch_live, or raised when that row is gone
-- (the first fence after a reset). Concurrent first fences take turns on the logged row
-- (FOR UPDATE); each statement of this function reads with a new snapshot, so the one that
-- waited sees the raise committed meanwhile and does not raise again. The raising
-- transaction commits with a WAL flush (synchronous_commit on for it, whatever the
-- session's setting). The result is kept in the server process's setting
-- dblock.fence_epoch as '<OID of dblock_fence_volatile_seq>:<epoch>' for dblock_next_fence:
-- a session setting, like one set by SET, reverted if the transaction does not commit. It
-- stays right as long as the process lives, since every reset of the unlogged data ends
-- every server process first; the OID keeps two dblock schemas of one database apart.
CREATE OR REPLACE FUNCTION dblock_fence_epoch_now() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  v_epoch bigint;
  v_timeline bigint;
BEGIN
  SELECT l.epoch INTO v_epoch FROM dblock_fence_epoch_live l WHERE l.id = 1;
  IF NOT FOUND THEN
    PERFORM 1 FROM dblock_fence_epoch e WHERE e.id = 1 FOR UPDATE;
    SELECT l.epoch INTO v_epoch FROM dblock_fence_epoch_live l WHERE l.id = 1;
    IF NOT FOUND THEN
      v_timeline = CAST(CAST('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) AS bit(32)) AS bigint);
      UPDATE dblock_fence_epoch e
         SET epoch = e.epoch + CASE WHEN e.timeline = v_timeline THEN 1 ELSE 64 END,
             timeline = v_timeline, server_started = pg_postmaster_start_time()
       WHERE e.id = 1
      RETURNING e.epoch INTO v_epoch;
      INSERT INTO dblock_fence_epoch_live (id, epoch) VALUES (1, v_epoch);
      PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
  END IF;
  PERFORM set_config('dblock.fence_epoch',
                     CAST(CAST(CAST('dblock_fence_volatile_seq' AS regclass) AS oid) AS text) || ':' ||
                     CAST(v_epoch AS text), false);
  RETURN v_epoch;
END
$fn$;

-- The next fence. A plain SQL function, inlined by the planner into the statement that
-- calls it (no function call, no table read): the epoch from the server process's
-- setting when dblock_fence_epoch_now() left it there for this schema's sequence, else
-- from dblock_fence_epoch_now() (the first fence of each server process).
CREATE OR REPLACE FUNCTION dblock_next_fence() RETURNS bigint
LANGUAGE sql VOLATILE AS $fn$
  SELECT COALESCE(CASE WHEN split_part(current_setting('dblock.fence_epoch', true), ':', 1)
                            = CAST(CAST(CAST('dblock_fence_volatile_seq' AS regclass) AS oid) AS text)
                       THEN CAST(split_part(current_setting('dblock.fence_epoch', true), ':', 2) AS bigint) END,
                  dblock_fence_epoch_now()) * 1099511627776 + nextval('dblock_fence_volatile_seq')
$fn$;

-- dblock_locks' CHECK constraints (migrations 0001 and 0005: name of 1 to 255 bytes,
-- holds > 0, lock_delay_ms >= 0) are dropped: PostgreSQL rebuilds each one's expression
-- from its stored text for every INSERT, about 15 % of the server work of an acquire and
-- release pair. The library checks the same bounds before it sends a value (a lock name,
-- session_options::lock_delay), holds is only ever 1 or raised or lowered above 1 by its
-- statements, and none relies on the constraints. lock_tables_logged.sql adds them back.
ALTER TABLE dblock_locks DROP CONSTRAINT IF EXISTS dblock_locks_name_check;
ALTER TABLE dblock_locks DROP CONSTRAINT IF EXISTS dblock_locks_holds_check;
ALTER TABLE dblock_locks DROP CONSTRAINT IF EXISTS dblock_locks_lock_delay_ms_check;

ALTER TABLE dblock_locks SET UNLOGGED;
ALTER TABLE dblock_lock_waiters SET UNLOGGED;
ALTER TABLE dblock_lock_holders SET UNLOGGED;
