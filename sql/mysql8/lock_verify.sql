-- guard.verify_in(tx): inside the caller's transaction, locks the lock row if it is still
-- ours with the same fence and not expired by the server's clock; the lock blocks a takeover
-- until the caller commits. No row = no longer held.
-- FOR UPDATE, not a shared lock: MySQL 8.0 spells a shared locking read FOR SHARE, which
-- MariaDB 10.11 refuses (1064), and MariaDB's older spelling is the one MySQL 8.0 keeps only
-- for compatibility. The
-- exclusive lock gives the same guarantee; two transactions verifying the same grant at
-- once queue instead of sharing.
SELECT fence FROM dblock_locks
 WHERE name = $1 AND owner = $2 AND fence = $3 AND expires_at > UTC_TIMESTAMP(6)
   FOR UPDATE
