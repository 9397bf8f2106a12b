-- dblock schema 0017: on PostgreSQL, MariaDB and MySQL 8.0 this step makes a release that hands
-- a lease lock on answer with the grant it made (dblock_lock_release_to_line_grant). SQLite's
-- release hands it on in the process's own statements, which read that grant already; the step
-- exists so that every dialect keeps the same numbered schema steps.
SELECT 1;
