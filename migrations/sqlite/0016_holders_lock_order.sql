-- dblock schema 0016: on MariaDB and MySQL 8.0 this step makes the read-write and permit
-- grant functions lock a name's hold rows through the primary key before they delete the
-- expired ones (migrations/mysql/0016_holders_lock_order.sql). This dialect needs no change;
-- the step exists so that every dialect keeps the same numbered schema steps.
SELECT 1;
