-- Session lock (ephemeral, like a ZooKeeper ephemeral node): a session-level advisory
-- lock on the 64-bit key $1 (the first 8 bytes of SHA-256 of the lock name), held by
-- this connection until released or until the connection ends. 1 = taken, 0 = busy.
-- Advisory locks are per database, so equal names in two databases do not collide.
SELECT CASE WHEN pg_try_advisory_lock($1) THEN 1 ELSE 0 END
