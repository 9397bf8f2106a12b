-- The server's version text, read once at connect when the URL names no dialect (one round
-- trip). A text that says MariaDB selects MariaDB's statements (sql/mysql), any other the
-- MySQL 8.0 ones (sql/mysql8).
SELECT VERSION()
