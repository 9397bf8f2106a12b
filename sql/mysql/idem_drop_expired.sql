-- sql/mysql/idem_drop_expired.sql — idempotency begin() and run_once(), MariaDB: deletes the
-- record idem_claim.sql reported past its retention, so that the claim sent next inserts the
-- key again as attempt 1 (a record past its retention counts as absent). $1 scope, $2 key.
-- The condition is checked again here: a record another claim started over in between is live
-- and stays.
DELETE FROM dblock_idempotency
 WHERE scope = $1 AND idem_key = $2 AND expires_at <= UTC_TIMESTAMP(6)
