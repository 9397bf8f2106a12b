-- dblock schema 0012: on MySQL 8.0 this step creates a second idempotency claim function that
-- inserts first (migrations/mysql8/0012_idem_claim_insert_first.sql). MariaDB's claim is one
-- INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING statement (sql/mysql/idem_claim.sql),
-- unchanged; the step exists so that every dialect keeps the same numbered schema steps. DO
-- evaluates an expression and changes nothing.
DO 0;
