-- Take the migration lease for owner $1 for $2 ms when it is free or expired, or renew it when
-- $1 holds it; a live lease of another owner is left as it is. Assignments run left to right,
-- so expires_at is decided from the NEW owner. On Galera two nodes taking it at once conflict
-- at certification and one of them fails with a deadlock error (retried by the next poll).
-- migration_lease_held.sql then tells whether the row is ours. UTC_TIMESTAMP(6): the server's
-- clock only.
INSERT INTO dblock_migration_lease (id, owner, expires_at)
VALUES (1, $1, UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND)
ON DUPLICATE KEY UPDATE
  owner      = IF(expires_at <= UTC_TIMESTAMP(6) OR owner = $1, $1, owner),
  expires_at = IF(owner = $1, UTC_TIMESTAMP(6) + INTERVAL (CAST($2 AS SIGNED) * 1000) MICROSECOND, expires_at)
