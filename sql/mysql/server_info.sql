-- What a MySQL-family server is, read once at connect (one round trip): its version text and,
-- on a server built with Galera replication, whether it is a node of a Galera cluster
-- (wsrep_on; MySQL itself has no such variable and returns no row for it). A version text that
-- says MariaDB on a server that is not a Galera node selects MariaDB's statements (sql/mysql);
-- anything else the MySQL 8.0 ones (sql/mysql8), whose fences come from a counter row that
-- Galera replicates and certifies like any other row.
-- Rows: (Variable_name, Value).
SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'wsrep_on')
