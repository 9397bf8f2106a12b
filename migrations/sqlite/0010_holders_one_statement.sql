-- dblock schema 0010: on PostgreSQL, MariaDB and MySQL 8.0 this step creates the functions
-- that grant a read-write lock or semaphore permits in one statement
-- (migrations/postgresql/0010_holders_one_statement.sql). SQLite runs in the process (a
-- statement costs no network round trip) and keeps its grant transaction of steps; the step
-- exists so that every dialect keeps the same numbered schema steps.
SELECT 1;
